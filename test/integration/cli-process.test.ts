import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ApiKeyAdminTable } from '../../cli/api-key-admin-table';
import type { TableNames } from '../../service/local-dynamodb';
import { freshTables, testClient, testEndpoint } from '../helpers/local-stack';
import { runProcess } from '../helpers/process';

/** An environment with no AWS configuration at all, and this test's Node first on PATH. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('AWS_')) env[name] = value;
  const home = mkdtempSync(join(tmpdir(), 'cli-home-'));
  return {
    ...env,
    HOME: home,
    AWS_CONFIG_FILE: join(home, 'config'),
    AWS_SHARED_CREDENTIALS_FILE: join(home, 'credentials'),
    AWS_EC2_METADATA_DISABLED: 'true',
    PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`,
    ...extra,
  };
}

/**
 * The CLI's script as `npm run cli` runs it (`tsx cli/main.ts`), without npm and tsx's wrapper process in between:
 * `node --import tsx` is what tsx runs.
 */
function runCli(argv: string[], env: NodeJS.ProcessEnv) {
  return runProcess(process.execPath, ['--import', 'tsx', 'cli/main.ts', ...argv], { env });
}

/** stderr without npm's own notices about the machine's npm config. */
function cliLines(stderr: string): string[] {
  return stderr
    .split('\n')
    .filter((line) => line.length > 0 && !line.startsWith('npm warn') && !line.startsWith('npm notice'));
}

describe('CLI: as a process', () => {
  let client: DynamoDBClient;
  let tables: TableNames;

  beforeAll(async () => {
    client = testClient();
    tables = await freshTables(client);
  });

  afterAll(() => {
    client.destroy();
  });

  it('`npm run --silent cli -- keys create` puts only the key on stdout, so KEY=$(...) captures it', async () => {
    // Prepare
    const env = cleanEnv({ INVENTORY_TABLE_NAME: tables.inventory, API_KEYS_TABLE_NAME: tables.apiKeys });

    // Act
    const outcome = await runProcess(
      'npm',
      ['run', '--silent', 'cli', '--', 'keys', 'create', '--name', 'ci', '--endpoint', testEndpoint()],
      { env },
    );

    // Assess
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toMatch(/^psk_[A-Za-z0-9_-]{43}\n$/);
    expect(cliLines(outcome.stderr)).toEqual([
      expect.stringMatching(/^Created write API key key_\w+ "ci" in api-keys-/),
    ]);
    const keys = await new ApiKeyAdminTable({ client, tableName: tables.apiKeys }).list();
    expect(keys.map((key) => key.name)).toEqual(['ci']);
  }, 30_000);

  // Each usage rule: test/unit/cli-run.test.ts; an unreachable DynamoDB: cli-keys.test.ts; both in process.
  it.each([
    ['a usage error', 2, ['keys', 'create'], /^error: keys create needs --name NAME/],
    [
      '--stage without a region',
      1,
      ['keys', 'list', '--stage', 'staging'],
      /^error: No AWS region configured: set AWS_REGION/,
    ],
  ])(
    '%s exits %i with one line on stderr and no stack trace',
    async (_, code, argv, message) => {
      // Act
      const outcome = await runCli(argv as string[], cleanEnv());

      // Assess
      expect(outcome.code).toBe(code);
      expect(outcome.stdout).toBe('');
      const lines = cliLines(outcome.stderr);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(message as RegExp);
    },
    30_000,
  );

  it('--stage without credentials exits 1 with one line saying so', async () => {
    // Act
    const outcome = await runCli(['keys', 'list', '--stage', 'production'], cleanEnv({ AWS_REGION: 'eu-west-1' }));

    // Assess
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toBe('');
    expect(cliLines(outcome.stderr)).toEqual([
      expect.stringMatching(/^error: No AWS credentials found: set AWS_PROFILE/),
    ]);
  }, 30_000);
});
