import { Agent } from 'node:https';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { type DynamoDbTlsEndpoint, startDynamoDbTlsEndpoint } from '../../bench/dynamodb-tls';
import { testEndpoint } from '../helpers/local-stack';
import { runProcess } from '../helpers/process';

/** A client of `endpoint` that trusts `ca` (undefined: only Node's bundled CAs). */
function clientOf(endpoint: string, ca?: string): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
    requestHandler: { httpsAgent: new Agent({ ca }), requestTimeout: 10_000 },
  });
}

describe('Bench: DynamoDB Local over HTTPS for the cold-path probes (bench/dynamodb-tls.ts)', () => {
  let tls: DynamoDbTlsEndpoint;
  beforeAll(async () => {
    tls = await startDynamoDbTlsEndpoint(testEndpoint());
  });
  afterAll(() => tls.close());

  it('serves DynamoDB Local on an https URL to a client that trusts its certificate', async () => {
    const client = clientOf(tls.url, tls.certificate);
    const direct = clientOf(testEndpoint());
    try {
      const over = await client.send(new ListTablesCommand({}));
      expect(tls.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(over.$metadata.httpStatusCode).toBe(200);
      expect(over.TableNames).toEqual((await direct.send(new ListTablesCommand({}))).TableNames);
    } finally {
      client.destroy();
      direct.destroy();
    }
  });

  it('is refused by a client that does not trust its certificate: the handshake is verified, not skipped', async () => {
    const client = clientOf(tls.url);
    try {
      await expect(client.send(new ListTablesCommand({}))).rejects.toThrow(/self-signed certificate/);
    } finally {
      client.destroy();
    }
  });

  it('is trusted by a fresh node process given only its clientEnvironment, as each probe process is', async () => {
    const script = `require('node:https').get(process.argv[1], (r) => { console.log('status', r.statusCode); r.resume(); })
      .on('error', (e) => { console.log('error', e.code); process.exitCode = 1; });`;
    const run = await runProcess(process.execPath, ['-e', script, tls.url], {
      env: { ...process.env, ...tls.clientEnvironment },
    });
    // DynamoDB Local answers a bare GET with an HTTP status; what matters is that TLS verification passed.
    expect({ code: run.code, out: run.stdout.trim() }).toEqual({
      code: 0,
      out: expect.stringMatching(/^status \d{3}$/),
    });
  });
});
