import { createHash } from 'node:crypto';
import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  IdempotencyPersistenceLayerError,
  IdempotencyValidationError,
  makeIdempotent,
} from '@aws-lambda-powertools/idempotency';
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { RETRY_AFTER_SECONDS } from '../../service/error-codes';
import { StorageUnavailableError, ValidationError } from '../inventory/errors';
import { REPEATED_CHANGE_WINDOW_SECONDS } from '../inventory/types';
import { isStorageUnavailable } from '../store/storage-errors';
import { headerValue, headerValues } from './headers';
import { HttpError } from './http-error';

/** The request header naming a retry-safe write (IETF draft "The Idempotency-Key HTTP Header Field"). */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/** Sent on an answer that is the stored first answer to an earlier request with the same key. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

/** 1 to 255 printable ASCII characters (space to tilde). */
const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/** A Structured Field String (RFC 8941 §3.3.3), the IETF draft's form of the value: `"…"`, `\"` and `\\` escaped. */
const SF_STRING = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;

/**
 * Reads the optional `Idempotency-Key` header (undefined when absent): the draft's quoted form `"K"` and the bare form
 * `K` are one key. @throws ValidationError when empty, over 255 characters, not printable ASCII, or sent twice.
 */
export function parseIdempotencyKey(
  event: Pick<APIGatewayProxyEvent, 'headers' | 'multiValueHeaders'>,
): string | undefined {
  const value = headerValue(event.headers, IDEMPOTENCY_KEY_HEADER);
  if (value === undefined) return undefined;
  const sent = headerValues(event.multiValueHeaders, IDEMPOTENCY_KEY_HEADER).length;
  if (sent > 1) throw new ValidationError(`${IDEMPOTENCY_KEY_HEADER} must be sent once; got ${sent} values.`);
  if (!IDEMPOTENCY_KEY_PATTERN.test(value)) {
    const got = value.length === 0 ? 'an empty one' : value.length > 255 ? 'a longer one' : 'one with other characters';
    throw new ValidationError(
      `${IDEMPOTENCY_KEY_HEADER} must be 1 to 255 printable ASCII characters (space to ~); got ${got}.`,
    );
  }
  const quoted = SF_STRING.exec(value);
  if (!quoted) return value;
  const key = (quoted[1] as string).replace(/\\(["\\])/g, '$1');
  if (key.length === 0) throw new ValidationError(`${IDEMPOTENCY_KEY_HEADER} must not be empty; got "".`);
  return key;
}

/** What identifies one idempotent request: who sent it, under which key, asking what. */
export interface IdempotentRequest {
  /** The API key id: keys are per client, so one client can neither replay nor block another's. */
  keyId: string;
  idempotencyKey: string;
  /** The request as the operation understood it (petId and parsed body): a repeat must ask the same. */
  request: Record<string, unknown>;
}

/** Runs an operation once per idempotency key: the answer is a response, refusals included. */
export type IdempotentRunner = (
  request: IdempotentRequest,
  context: Context,
  operation: () => Promise<APIGatewayProxyResult>,
) => Promise<APIGatewayProxyResult>;

/**
 * An idempotent runner on the Powertools Idempotency utility (docs/api.md says what a client meets). The function
 * wrapper, not the middy middleware, whose onError deletes the record of a refused duplicate and so unlocks the first.
 */
export function createIdempotentRunner(options: {
  persistenceStore: BasePersistenceLayer;
  /** Names the operation in the stored keys, so another operation's keys never meet these. */
  operation: string;
  /** Told when an answer was given but could not be kept (the idempotency store failed after the change). */
  onAnswerNotKept?: (error: IdempotencyPersistenceLayerError) => void;
  /** Told each time a stored first answer is given back (nothing was applied). */
  onReplay?: () => void;
}): IdempotentRunner {
  const config = idempotencyConfig(options.onReplay);
  return async function runIdempotently(request, context, operation) {
    // The operation's own answer, once it has one: the utility stores it after, and that write can fail.
    let answered: APIGatewayProxyResult | undefined;
    const run = makeIdempotent(
      // The second argument makes Powertools take the Lambda context: an in-flight record expires with the invocation.
      async (_payload: unknown, _context: Context) => {
        answered = await operation();
        return answered;
      },
      { persistenceStore: options.persistenceStore, config, keyPrefix: options.operation },
    );
    const payload = idempotencyPayload(request);
    try {
      return await run(payload, context);
    } catch (error) {
      // The change is done; only keeping its answer failed. The true answer ends the exchange, where a 503 would
      // send the client to retry a change that landed.
      if (answered !== undefined && error instanceof IdempotencyPersistenceLayerError) {
        options.onAnswerNotKept?.(error);
        return answered;
      }
      throw translateIdempotencyError(error);
    }
  };
}

/** Keyed by the API key id and the Idempotency-Key, the request validated by hash, a replay marked as such. */
export function idempotencyConfig(onReplay?: () => void): IdempotencyConfig {
  return new IdempotencyConfig({
    eventKeyJmesPath: 'key',
    payloadValidationJmesPath: 'request',
    // As long as the entry recognizes the change by its changeId.
    expiresAfterSeconds: REPEATED_CHANGE_WINDOW_SECONDS,
    hashFunction: 'sha256',
    throwOnNoIdempotencyKey: true,
    responseHook: function markReplayed(response) {
      onReplay?.();
      const stored = response as unknown as APIGatewayProxyResult;
      return { ...stored, headers: { ...stored.headers, [IDEMPOTENT_REPLAYED_HEADER]: 'true' } } as never;
    },
  });
}

/**
 * The changeId of a request's change (`ChangeOrigin.changeId`): one hash per client key, Idempotency-Key and request,
 * so a repeat whose first answer could not be kept finds its change on the entry instead of applying it twice.
 */
export function idempotentChangeId(request: IdempotentRequest): string {
  const canonical = JSON.stringify([
    request.keyId,
    request.idempotencyKey,
    Object.entries(request.request).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  ]);
  return `idempotency-key:${createHash('sha256').update(canonical).digest('base64url')}`;
}

/** The payload the utility reads {@link idempotencyConfig}'s expressions from. */
export function idempotencyPayload(request: IdempotentRequest): { key: string[]; request: Record<string, unknown> } {
  return { key: [request.keyId, request.idempotencyKey], request: request.request };
}

function translateIdempotencyError(error: unknown): unknown {
  if (error instanceof IdempotencyValidationError)
    return new HttpError(
      'IDEMPOTENCY_KEY_REUSED',
      `This ${IDEMPOTENCY_KEY_HEADER} was first used with another request (petId or body); send a new key with a new request.`,
      { cause: error },
    );
  if (error instanceof IdempotencyAlreadyInProgressError)
    return new HttpError(
      'CONFLICT',
      `A request with this ${IDEMPOTENCY_KEY_HEADER} is still in progress; retry after ${RETRY_AFTER_SECONDS} s for its answer.`,
      { cause: error, headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) } },
    );
  if (error instanceof IdempotencyPersistenceLayerError && isStorageUnavailable(error.cause))
    return new StorageUnavailableError('idempotency store unavailable', { cause: error });
  return error;
}
