import type { ApiKeyRecord } from './key';

/** The storage port of API keys, stored and found by their SHA-256 hash only (the CLI uses ApiKeyTable itself). */
export interface ApiKeyRepository {
  findByHash(keyHash: string): Promise<ApiKeyRecord | undefined>;
  create(record: ApiKeyRecord): Promise<void>;
  /** Removes the key's row, if any (the self-check's short-lived key). */
  delete(keyHash: string): Promise<void>;
}
