import { ApiKeyAdminTable } from '../../cli/api-key-admin-table';
import { revokeKey } from '../../cli/commands/keys';
import { CliError } from '../../cli/errors';
import { run } from '../../cli/run';
import type { Target } from '../../cli/target';
import { hashApiKey } from '../../functions/api-keys/key';
import { aCapturedIo } from '../fixtures/cli/capture-io';
import { call } from '../helpers/http';
import { startTestStack, type TestStack, testEndpoint } from '../helpers/local-stack';

describe('CLI: keys', () => {
  let stack: TestStack;
  /** Runs the CLI in-process against this file's fresh tables. */
  const cli = async (...argv: string[]) => {
    const io = aCapturedIo({
      env: { INVENTORY_TABLE_NAME: stack.tables.inventory, API_KEYS_TABLE_NAME: stack.tables.apiKeys },
    });
    const code = await run([...argv, '--endpoint', testEndpoint()], io);
    return { code, stdout: io.stdout.text, stderr: io.stderr.text };
  };

  beforeAll(async () => {
    stack = await startTestStack();
  });

  afterAll(async () => {
    await stack.close();
  });

  it('creates a key that the gateway accepts, printed alone on the last line of stdout', async () => {
    // Act
    const created = await cli('keys', 'create', '--name', 'ci');

    // Assess
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^psk_[A-Za-z0-9_-]{43}\n$/);
    expect(created.stderr).toMatch(/^Created write API key key_[0-9a-f]{16} "ci" in api-keys-.* Store it now/);
    const key = created.stdout.trim();
    const response = await call(stack.url, 'GET', '/inventory', {
      headers: { Authorization: `Bearer ${key}` },
      route: '/inventory',
    });
    expect(response.status).toBe(200);
  });

  // What a read key may do: safe-writes.test.ts.
  it('creates a read key whose PATCH is 403, and lists it with its scope', async () => {
    // Act
    const created = await cli('keys', 'create', '--name', 'display', '--scope', 'read');
    const auth = { Authorization: `Bearer ${created.stdout.trim()}` };
    const patch = await call(stack.url, 'PATCH', '/inventory/1', {
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: '{"adjustBy":1}',
      route: '/inventory/{petId}',
    });
    const rows = JSON.parse((await cli('keys', 'list', '--format', 'json')).stdout) as Record<string, unknown>[];

    // Assess
    expect(created.stderr).toMatch(/^Created read API key/);
    expect(patch.json).toMatchObject({ code: 'ACCESS_DENIED', status: 403 });
    expect(rows.find((row) => row.name === 'display')).toMatchObject({ scope: 'read' });
  });

  it('refuses an unknown --scope with a usage error (exit 2)', async () => {
    const outcome = await cli('keys', 'create', '--name', 'x', '--scope', 'admin');
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toMatch(/--scope must be one of read, write; got "admin"/);
  });

  it('lists id, name, scope, created and revoked but never a key or its hash', async () => {
    // Prepare
    const { stdout } = await cli('keys', 'create', '--name', 'listed');
    const key = stdout.trim();

    // Act
    const text = await cli('keys', 'list');
    const json = await cli('keys', 'list', '--format', 'json');

    // Assess
    expect(text.code).toBe(0);
    expect(text.stdout.split('\n')[0]).toMatch(/^ID +NAME +SCOPE +CREATED +REVOKED$/);
    expect(text.stdout).toMatch(/key_[0-9a-f]{16} +listed +write +\d{4}-\d\d-\d\dT[\d:.]+Z +-/);
    const rows = JSON.parse(json.stdout) as Record<string, unknown>[];
    expect(rows.find((row) => row.name === 'listed')).toEqual({
      keyId: expect.stringMatching(/^key_/),
      name: 'listed',
      scope: 'write',
      createdAt: expect.any(String),
      revokedAt: null,
    });
    for (const output of [text, json]) {
      // Where it read them, on stderr: stdout stays the list alone.
      expect(output.stderr).toMatch(/^\d+ API keys? in \S+ \(DynamoDB at http:\/\/127\.0\.0\.1:\d+\)\.\n$/);
      const all = output.stdout + output.stderr;
      expect(all).not.toContain(key);
      expect(all).not.toContain(hashApiKey(key));
      expect(all).not.toContain(hashApiKey(stack.key));
      expect(all).not.toMatch(/psk_/);
    }
  });

  it('revokes a key: refused with 401 once the authorizer cache is cleared, and says how long a cache keeps it', async () => {
    // Prepare
    const key = (await cli('keys', 'create', '--name', 'to-revoke')).stdout.trim();
    const auth = { Authorization: `Bearer ${key}` };
    expect((await call(stack.url, 'GET', '/inventory', { headers: auth, route: '/inventory' })).status).toBe(200);
    const listed = JSON.parse((await cli('keys', 'list', '--format', 'json')).stdout) as {
      keyId: string;
      name: string;
    }[];
    const keyId = listed.find((row) => row.name === 'to-revoke')?.keyId as string;

    // Act
    const revoked = await cli('keys', 'revoke', keyId);
    const cachedAnswer = await call(stack.url, 'GET', '/inventory', { headers: auth, route: '/inventory' });
    stack.gateway.clearAuthorizerCache();
    const answer = await call(stack.url, 'GET', '/inventory', { headers: auth, route: '/inventory' });

    // Assess
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(
      new RegExp(`^Revoked API key ${keyId} "to-revoke" at \\d{4}-\\S+ \\(\\S+, DynamoDB at `),
    );
    expect(revoked.stdout).toMatch(/restart it to refuse the key now/);
    expect(cachedAnswer.status).toBe(200);
    expect(answer.status).toBe(401);
    expect(JSON.parse((await cli('keys', 'list', '--format', 'json')).stdout)).toContainEqual(
      expect.objectContaining({ keyId, revokedAt: expect.stringMatching(/^\d{4}-/) }),
    );
    const again = await cli('keys', 'revoke', keyId);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/was already revoked at/);
  });

  it('exits 1 with one line for an unknown key id and leaves the other keys working', async () => {
    // Act
    const outcome = await cli('keys', 'revoke', 'key_0000000000000000');

    // Assess
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/^error: No API key with id key_0000000000000000 in api-keys-[^\n]+\n$/);
    stack.gateway.clearAuthorizerCache();
    expect(
      (await call(stack.url, 'GET', '/inventory', { headers: stack.authHeader, route: '/inventory' })).status,
    ).toBe(200);
  });

  it.each<{ naming: string; env: Record<string, string>; argv: () => string[]; message: RegExp }>([
    {
      naming: 'the table when the keys table does not exist',
      env: { API_KEYS_TABLE_NAME: 'no-such-table' },
      argv: () => ['keys', 'list', '--endpoint', testEndpoint()],
      message: /^error: Table no-such-table does not exist in DynamoDB at http:\/\/127\.0\.0\.1:\d+: [^\n]+\n$/,
    },
    {
      naming: 'the endpoint when DynamoDB cannot be reached',
      env: { DYNAMODB_PORT: '9' },
      argv: () => ['keys', 'list'],
      message:
        /^error: Cannot reach local DynamoDB at http:\/\/127\.0\.0\.1:9 \(.*ECONNREFUSED.*\): is `npm start` running\?[^\n]*\n$/,
    },
  ])('exits 1 with one line naming $naming', async ({ env, argv, message }) => {
    // Prepare
    const io = aCapturedIo({ env });

    // Act
    const code = await run(argv(), io);

    // Assess
    expect(code).toBe(1);
    expect(io.stderr.text).toMatch(message);
  });
});

describe('CLI: keys revoke on a deployed stage', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startTestStack();
  });

  afterAll(async () => {
    await stack.close();
  });

  /**
   * Runs `keys revoke` against this file's tables as if they were the staging stage's (DynamoDB Local stands in for
   * the stage's table; there is no AWS here), with the stack outputs naming the REST API and stage.
   */
  async function revokeOnStage(keyId: string, flush: () => Promise<void>, waits: number[] = []) {
    const io = {
      ...aCapturedIo(),
      sleep: async (ms: number) => {
        waits.push(ms);
      },
    };
    const target: Target = {
      client: stack.client,
      tables: stack.tables,
      description: 'stage staging (stack PetStoreInventory-staging, eu-west-1)',
      stage: 'staging',
      authorizerCacheTtlSeconds: 300,
      flushAuthorizerCache: flush,
      close: () => undefined,
    };
    const outcome = await revokeKey({ io, options: {}, positionals: [keyId], target: async () => target }).then(
      () => undefined,
      (error: Error) => error,
    );
    return { outcome, stdout: io.stdout.text };
  }

  it('revokes the key, then flushes the stage authorizer cache, and again once a running authorizer call has ended', async () => {
    // Prepare
    const { keyId } = await stack.createKey('leaked');
    const events: string[] = [];
    const waits: number[] = [];
    const keys = new ApiKeyAdminTable({ client: stack.client, tableName: stack.tables.apiKeys });

    // Act
    const { outcome, stdout } = await revokeOnStage(
      keyId,
      async () => {
        // The flush must come after the revocation is stored, or a request in between re-caches the old answer.
        events.push(`flush (revoked: ${(await keys.list()).find((k) => k.keyId === keyId)?.revokedAt !== undefined})`);
      },
      waits,
    );

    // Assess: the second flush comes after the authorizer's time-out (10 s) and a margin, so an authorizer call that
    // read the key before it was revoked cannot leave its Allow in the cache.
    expect(outcome).toBeUndefined();
    expect(events).toEqual(['flush (revoked: true)', 'flush (revoked: true)']);
    expect(waits).toEqual([12_000]);
    expect(stdout).toMatch(new RegExp(`^Revoked API key ${keyId} "leaked" at \\d{4}-[^\\n]+\\n`));
    expect(stdout).toMatch(
      /Flushed the authorizer cache of the staging API: the key is refused from the next request on\.\n$/,
    );
  });

  it('exits with an error that says how long the key still works when the flush fails, and stays revoked', async () => {
    // Prepare
    const { keyId } = await stack.createKey('flush-fails');

    // Act
    const { outcome } = await revokeOnStage(keyId, async () => {
      throw new CliError('Could not flush the authorizer cache of API a1b2 stage v1 in eu-west-1: AccessDenied');
    });

    // Assess
    expect(outcome).toBeInstanceOf(CliError);
    expect(outcome?.message).toBe(
      'Could not flush the authorizer cache of API a1b2 stage v1 in eu-west-1: AccessDenied. The staging API keeps ' +
        "accepting this key for up to 300 s: the authorizer caches each key's answer for that long. " +
        `Run keys revoke ${keyId} again to retry the flush.`,
    );
    const keys = new ApiKeyAdminTable({ client: stack.client, tableName: stack.tables.apiKeys });
    expect((await keys.list()).find((k) => k.keyId === keyId)?.revokedAt).toMatch(/^\d{4}-/);
  });
});
