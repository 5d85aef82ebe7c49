import { allowedResources, authorize, UnauthorizedError } from '../../functions/api-keys/authorize';
import {
  API_KEY_PREFIX,
  type ApiKeyScope,
  BEARER_VALIDATION_REGEX,
  generateApiKey,
  hashApiKey,
  isWellFormedApiKey,
  parseBearerToken,
} from '../../functions/api-keys/key';
import { policyAllows } from '../../functions/api-keys/policy';
import { StorageUnavailableError } from '../../functions/inventory/errors';
import { toApiKeyRecord } from '../../functions/store/api-key-table';
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

  it('gives API Gateway a validation regex that passes exactly the bearer tokens shaped like a key it issues', () => {
    const regex = new RegExp(BEARER_VALIDATION_REGEX);
    const key = generateApiKey('regex').key;
    for (const header of [`Bearer ${key}`, `bEaReR ${key}`, `Bearer  ${key} `]) {
      expect(regex.test(header)).toBe(true);
      expect(parseBearerToken(header)).toBe(key);
    }
    for (const header of [
      'Basic abc',
      'Bearer',
      'Bearer abc',
      `Bearer ${key}x`,
      `Bearer ${key.slice(0, -1)}`,
      `Bearer${key}`,
    ]) {
      expect(regex.test(header)).toBe(false);
    }
  });
});

describe('Function: authorizer decision', () => {
  /** A key table holding one key named staff-tool, of `scope` (left out: the default scope). */
  async function repoWithKey(scope?: ApiKeyScope) {
    const keys = new InMemoryApiKeyRepository();
    const { key, record } = generateApiKey('staff-tool', new Date(), scope);
    await keys.create(record);
    return { keys, key, record };
  }
  const arn = (method: string, path: string) => `arn:aws:execute-api:eu-west-1:123456789012:abc123/v1/${method}${path}`;

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
    expect(result.context).toEqual({ keyId: record.keyId, keyName: 'staff-tool', scope: 'write' });
  });

  // API Gateway evaluates the returned policy for the called method ARN, caches it per token and answers 403
  // (ACCESS_DENIED) to what it does not allow:
  // https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-lambda-authorizer-output.html
  it('gives a read key a policy allowing every GET route of the stage and no write, whatever route it was asked for', async () => {
    // Prepare
    const { keys, key } = await repoWithKey('read');
    // Act: asked on a PATCH first, as the first call of a cached policy may be
    const result = await authorize(keys, `Bearer ${key}`, arn('PATCH', '/inventory/1'));
    // Assess
    expect(result.context).toMatchObject({ scope: 'read' });
    for (const path of ['/inventory', '/inventory/1', '/inventory/9223372036854775807', '/pets/1', '/store/orders'])
      expect([path, policyAllows(result, arn('GET', path))]).toEqual([path, true]);
    expect(policyAllows(result, arn('PATCH', '/inventory/1'))).toBe(false);
    expect(policyAllows(result, arn('PATCH', '/inventory'))).toBe(false);
    expect(policyAllows(result, arn('DELETE', '/inventory/1'))).toBe(false);
    expect(policyAllows(result, 'arn:aws:execute-api:eu-west-1:123456789012:other/v1/GET/inventory')).toBe(false);
  });

  it('reads a key stored before scopes existed as a write key, and refuses a row with an unknown scope', () => {
    const row = { keyHash: { S: 'ab'.repeat(32) }, keyId: { S: 'key_1' }, name: { S: 'old' }, createdAt: { S: 'x' } };
    expect(toApiKeyRecord(row).scope).toBe('write');
    expect(toApiKeyRecord({ ...row, scope: { S: 'read' } }).scope).toBe('read');
    expect(() => toApiKeyRecord({ ...row, scope: { S: 'admin' } })).toThrow(/scope/);
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

  it('allows a write key every method of the stage and a read key its GET routes, from any method ARN of it', () => {
    const methodArn = 'arn:aws:execute-api:us-east-1:1:api/v1/PATCH/inventory/9223372036854775807';
    const stage = 'arn:aws:execute-api:us-east-1:1:api/v1';
    expect(allowedResources('write', methodArn)).toBe(`${stage}/*/*`);
    expect(allowedResources('read', methodArn)).toEqual([
      `${stage}/GET/inventory`,
      `${stage}/GET/inventory/*`,
      `${stage}/GET/inventory/changes`,
      `${stage}/GET/inventory/*/history`,
      `${stage}/GET/pets/*`,
      `${stage}/GET/store/orders`,
    ]);
    expect(() => allowedResources('write', 'not-an-arn')).toThrow();
  });
});
