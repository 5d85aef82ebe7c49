import type { ApiKeyRecord } from './key';

/** The storage port for API keys. Keys are stored and found by their SHA-256 hash only. */
export interface ApiKeyRepository {
  findByHash(keyHash: string): Promise<ApiKeyRecord | undefined>;
  create(record: ApiKeyRecord): Promise<void>;
  list(): Promise<ApiKeyRecord[]>;
  /** Marks the key revoked; returns the record, or undefined when no key has that id. */
  revoke(keyId: string, now?: Date): Promise<ApiKeyRecord | undefined>;
  /** Removes the key's row; nothing happens when there is none. For short-lived keys (the deploy self-check). */
  delete(keyHash: string): Promise<void>;
}
