import { authorize, stageWideResource, UnauthorizedError } from '../../functions/api-keys/authorize';
import {
  API_KEY_PREFIX,
  BEARER_VALIDATION_REGEX,
  generateApiKey,
  hashApiKey,
  isWellFormedApiKey,
  parseBearerToken,
} from '../../functions/api-keys/key';
import { StorageUnavailableError } from '../../functions/inventory/errors';
import { InMemoryApiKeyRepository } from '../fixtures/builders';

const METHOD_ARN = 'arn:aws:execute-api:eu-west-1:123456789012:abc123/v1/GET/inventory';

describe('API keys: format and hashing', () => {
  it('creates recognisable 256-bit keys and stores only their SHA-256 hash', () => {
    const { key, record } = generateApiKey('ci', new Date('2026-01-02T03:04:05Z'));
    expect(key.startsWith(API_KEY_PREFIX)).toBe(true);
    expect(isWellFormedApiKey(key)).toBe(true);
    expect(record.keyHash).toBe(hashApiKey(key));
    expect(record.keyHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(record)).not.toContain(key);
    expect(record).toMatchObject({ name: 'ci', createdAt: '2026-01-02T03:04:05.000Z' });
    expect(generateApiKey('ci').key).not.toBe(key);
  });

  it.each([
    ['Bearer abc', 'abc'],
    ['bearer abc', 'abc'],
    ['BEARER abc', 'abc'],
    ['Bearer   abc', 'abc'],
    ['Bearer abc==', 'abc=='],
    ['Bearer a.b-c_d~e+f/g', 'a.b-c_d~e+f/g'],
  ])('reads the token of %p (scheme case-insensitive, RFC 6750)', (header, token) => {
    expect(parseBearerToken(header)).toBe(token);
  });

  it.each([undefined, '', 'Bearer', 'Bearer ', 'Basic abc', 'Bearerabc', 'Bearer a b', 'Bearer =abc', 'Token abc'])(
    'reads no token from %p',
    (header) => {
      expect(parseBearerToken(header)).toBeUndefined();
    },
  );

  it('gives API Gateway a validation regex that agrees with the parser', () => {
    const regex = new RegExp(BEARER_VALIDATION_REGEX);
    for (const header of ['Bearer abc', 'bEaReR abc==', 'Bearer  x']) expect(regex.test(header)).toBe(true);
    for (const header of ['Basic abc', 'Bearer', 'Bearer a b', 'Bearerabc']) expect(regex.test(header)).toBe(false);
  });
});

describe('Function: authorizer decision', () => {
  async function repoWithKey() {
    const keys = new InMemoryApiKeyRepository();
    const { key, record } = generateApiKey('staff-tool');
    await keys.create(record);
    return { keys, key, record };
  }

  it('allows a known key with a policy covering every method and path of the stage', async () => {
    // Prepare
    const { keys, key, record } = await repoWithKey();
    // Act
    const result = await authorize(keys, `Bearer ${key}`, METHOD_ARN);
    // Assess
    expect(result.principalId).toBe(record.keyId);
    expect(result.policyDocument.Statement).toEqual([
      {
        Action: 'execute-api:Invoke',
        Effect: 'Allow',
        Resource: 'arn:aws:execute-api:eu-west-1:123456789012:abc123/v1/*/*',
      },
    ]);
    expect(result.context).toEqual({ keyId: record.keyId, keyName: 'staff-tool' });
  });

  it('looks a key up by its SHA-256 hash alone: the key itself never reaches storage', async () => {
    const { keys, key } = await repoWithKey();
    const asked: string[] = [];
    const findByHash = keys.findByHash.bind(keys);
    keys.findByHash = (keyHash) => {
      asked.push(keyHash);
      return findByHash(keyHash);
    };
    await authorize(keys, `Bearer ${key}`, METHOD_ARN);
    expect(asked).toEqual([hashApiKey(key)]);
  });

  it('refuses a revoked key', async () => {
    const { keys, key, record } = await repoWithKey();
    await keys.revoke(record.keyId);
    await expect(authorize(keys, `Bearer ${key}`, METHOD_ARN)).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it('refuses an unknown well-formed key after one lookup', async () => {
    const { keys } = await repoWithKey();
    await expect(authorize(keys, `Bearer ${generateApiKey('x').key}`, METHOD_ARN)).rejects.toThrow('Unauthorized');
    expect(keys.lookups).toBe(1);
  });

  it.each([undefined, 'Bearer not-a-key', 'Basic cHNrXw==', `Bearer psk_${'a'.repeat(42)}`])(
    'refuses %p without touching storage',
    async (header) => {
      const { keys } = await repoWithKey();
      await expect(authorize(keys, header, METHOD_ARN)).rejects.toBeInstanceOf(UnauthorizedError);
      expect(keys.lookups).toBe(0);
    },
  );

  it('lets a storage failure through as a failure to decide, not as Unauthorized', async () => {
    const { keys, key } = await repoWithKey();
    keys.failWith = new StorageUnavailableError('GetItem failed');
    await expect(authorize(keys, `Bearer ${key}`, METHOD_ARN)).rejects.toBeInstanceOf(StorageUnavailableError);
  });

  it('derives the stage-wide resource from any method ARN of the stage', () => {
    expect(stageWideResource('arn:aws:execute-api:us-east-1:1:api/v1/PATCH/inventory/9223372036854775807')).toBe(
      'arn:aws:execute-api:us-east-1:1:api/v1/*/*',
    );
    expect(() => stageWideResource('not-an-arn')).toThrow();
  });
});
