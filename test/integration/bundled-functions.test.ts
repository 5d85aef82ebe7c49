import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { esbuildOptions, handlerEntries } from '../../infra/bundling';
import { aLambdaContext, anApiGatewayEvent } from '../fixtures/builders';
import { startTestStack, type TestStack } from '../helpers/local-stack';

const run = promisify(execFile);

/** Requires a bundle in a fresh node (as the Lambda runtime would), invokes its handler once, prints the result. */
const INVOKE = `
const [file, event, context] = process.argv.slice(1);
const ctx = { ...JSON.parse(context), getRemainingTimeInMillis: () => 10000 };
Promise.resolve(require(file).handler(JSON.parse(event), ctx)).then(
  (result) => process.stdout.write('\\nRESULT ' + JSON.stringify({ result })),
  (error) => process.stdout.write('\\nRESULT ' + JSON.stringify({ error: String(error && error.message) })),
);`;

describe('Bundles: every deployed function, bundled exactly as the stack bundles it, works over DynamoDB Local', () => {
  let stack: TestStack;
  let outDir: string;
  const bundles = new Map<string, string>();

  beforeAll(async () => {
    stack = await startTestStack();
    outDir = mkdtempSync(join(tmpdir(), 'petstore-bundles-'));
    for (const { handler, entry } of handlerEntries()) {
      const file = join(outDir, handler, 'index.js');
      await build({ ...esbuildOptions(entry, file), logLevel: 'error' });
      bundles.set(handler, file);
    }
  });
  afterAll(async () => {
    rmSync(outDir, { recursive: true, force: true });
    await stack.close();
  });

  async function invoke(
    handler: string,
    event: unknown,
    overrides: Record<string, string> = {},
  ): Promise<{ result?: Record<string, unknown>; error?: string; logs: string }> {
    // Only what Lambda gives a function: its environment, with the role's credentials in AWS_* variables.
    const env = {
      PATH: process.env.PATH ?? '',
      NODE_OPTIONS: '--enable-source-maps',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'bundle',
      AWS_SECRET_ACCESS_KEY: 'bundle',
      AWS_SESSION_TOKEN: 'bundle',
      AWS_ENDPOINT_URL_DYNAMODB: process.env.AWS_ENDPOINT_URL_DYNAMODB ?? '',
      INVENTORY_TABLE_NAME: stack.tables.inventory,
      API_KEYS_TABLE_NAME: stack.tables.apiKeys,
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_METRICS_DISABLED: 'true',
      HOME: outDir,
      ...overrides,
    };
    const { stdout, stderr } = await run(
      process.execPath,
      ['-e', INVOKE, bundles.get(handler) ?? '', JSON.stringify(event), JSON.stringify(aLambdaContext())],
      { env, timeout: 20_000 },
    );
    const marker = stdout.lastIndexOf('\nRESULT ');
    return { ...JSON.parse(stdout.slice(marker + '\nRESULT '.length)), logs: stdout.slice(0, marker) + stderr };
  }

  it('keeps every bundle within 250 KB', () => {
    for (const [handler, file] of bundles)
      expect([handler, statSync(file).size <= 250 * 1024]).toEqual([handler, true]);
  });

  it('lists the inventory with credentials from the environment alone (no credential files, no metadata service)', async () => {
    const { result, error } = await invoke(
      'list-inventory',
      anApiGatewayEvent({ httpMethod: 'GET', resource: '/inventory', body: null }),
    );
    expect(error).toBeUndefined();
    expect(result?.statusCode).toBe(200);
    expect(String(result?.body)).toContain('{"petId":9223372036854775807,"quantity":2,"status":"pending"}');
  });

  it('updates an entry and answers the stored item', async () => {
    const { result } = await invoke(
      'update-inventory',
      anApiGatewayEvent({ pathParameters: { petId: '2' }, body: '{"quantity":31}' }),
    );
    expect(result).toMatchObject({ statusCode: 200, body: '{"petId":2,"quantity":31,"status":"pending"}' });
  });

  it('authorizes a known key with a stage-wide policy and refuses an unknown one with exactly "Unauthorized"', async () => {
    const methodArn = 'arn:aws:execute-api:us-east-1:123456789012:api/v1/GET/inventory';
    const accepted = await invoke('authorizer', {
      type: 'TOKEN',
      authorizationToken: `Bearer ${stack.key}`,
      methodArn,
    });
    expect(accepted.result?.policyDocument).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Action: 'execute-api:Invoke',
          Effect: 'Allow',
          Resource: 'arn:aws:execute-api:us-east-1:123456789012:api/v1/*/*',
        },
      ],
    });
    const refused = await invoke('authorizer', { type: 'TOKEN', authorizationToken: 'Bearer psk_nope', methodArn });
    expect(refused.error).toBe('Unauthorized');
  });

  it('logs a failure with a stack trace that points at the TypeScript source (source maps work in the bundle)', async () => {
    // Prepare: a table that does not exist is a defect (500), logged at error level with its stack.
    const event = anApiGatewayEvent({ pathParameters: { petId: '2' }, body: '{"quantity":1}' });
    // Act
    const { result, logs } = await invoke('update-inventory', event, {
      INVENTORY_TABLE_NAME: 'no-such-table',
      POWERTOOLS_LOG_LEVEL: 'ERROR',
    });
    // Assess
    expect(result?.statusCode).toBe(500);
    expect(logs).toMatch(/functions\/store\/dynamo-inventory-repository\.ts:\d+:\d+/);
    expect(logs).not.toMatch(/index\.js:1:\d{4,}/);
  });

  it('answers the 501 routes', async () => {
    for (const handler of ['get-pet', 'list-store-orders']) {
      const { result } = await invoke(handler, anApiGatewayEvent({ httpMethod: 'GET', body: null }));
      expect(result?.statusCode).toBe(501);
    }
  });
});
