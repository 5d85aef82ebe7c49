import { createHash, randomBytes, randomUUID } from 'node:crypto';

/** Every key starts with this, so secret scanners and people can recognise a leaked one. */
export const API_KEY_PREFIX = 'psk_';
const API_KEY_PATTERN = /^psk_[A-Za-z0-9_-]{43}$/;
/** RFC 6750 §2.1: `Bearer` (any case), one or more spaces, a b64token. */
const BEARER_PATTERN = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** What a key may do: `read` calls only the read (GET) routes; `write` calls every route, reads included. */
export const API_KEY_SCOPES = ['read', 'write'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];
/** The scope of a key stored without one: such a key may write. */
export const DEFAULT_API_KEY_SCOPE: ApiKeyScope = 'write';

/** Returns whether `value` is one of the key scopes. */
export function isApiKeyScope(value: unknown): value is ApiKeyScope {
  return typeof value === 'string' && (API_KEY_SCOPES as readonly string[]).includes(value);
}

/** A stored key: everything but the key itself. */
export interface ApiKeyRecord {
  keyId: string;
  keyHash: string;
  name: string;
  createdAt: string;
  revokedAt?: string;
  /** @default {@link DEFAULT_API_KEY_SCOPE} for a row stored without one */
  scope: ApiKeyScope;
}

/** Creates a new key (256 random bits) and the record to store for it. The key itself is returned once. */
export function generateApiKey(
  name: string,
  now: Date = new Date(),
  scope: ApiKeyScope = DEFAULT_API_KEY_SCOPE,
): { key: string; record: ApiKeyRecord } {
  const key = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  return {
    key,
    record: {
      keyId: `key_${randomUUID().replaceAll('-', '').slice(0, 16)}`,
      keyHash: hashApiKey(key),
      name,
      createdAt: now.toISOString(),
      scope,
    },
  };
}

/** SHA-256 of the key, hex: what the keys table stores and is looked up by. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Whether a string has the shape of a key this service issues (checked before any lookup). */
export function isWellFormedApiKey(token: string): boolean {
  return API_KEY_PATTERN.test(token);
}

/** Extracts the token from an `Authorization: Bearer <token>` value, or undefined if it is not that. */
export function parseBearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  return BEARER_PATTERN.exec(header)?.[1];
}

/** API Gateway's `validationRegex` of the Authorization header (no flags): junk is 401 before the authorizer. */
export const BEARER_VALIDATION_REGEX = '^[Bb][Ee][Aa][Rr][Ee][Rr] +psk_[A-Za-z0-9_-]{43} *$';
