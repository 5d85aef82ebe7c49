import { execFile } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { SourceMap } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { SignatureV4 } from '@smithy/signature-v4';
import type { SourceData } from '@smithy/types';
import { mapBundlePositions } from '../../cli/commands/stack';
import { HistoryTable } from '../../functions/store/history-table';
import { type DeployedBundles, synthesizeDeployedBundles } from '../../infra/synthesized-assets';
import { tokenAuthorizerEvent } from '../../local/lambda/events';
import { aLambdaContext, anApiGatewayEvent } from '../fixtures/builders';
import { startTestStack, type TestStack, testEndpoint } from '../helpers/local-stack';
import { startThrottlingEndpoint } from '../helpers/throttling-endpoint';

const run = promisify(execFile);

/** PATCH /inventory/2 {"quantity":31} and GET /inventory, as API Gateway hands them to the functions. */
const SET_PET_2_TO_31 = anApiGatewayEvent({ pathParameters: { petId: '2' }, body: '{"quantity":31}' });
const LIST_INVENTORY = anApiGatewayEvent({ httpMethod: 'GET', resource: '/inventory', body: null });

const DYNAMODB_FUNCTIONS = [
  'list-inventory',
  'get-inventory-entry',
  'update-inventory',
  'list-inventory-history',
  'authorizer',
  'self-check',
  'record-history',
];

/**
 * Requires a bundle in a fresh node (as the Lambda runtime would, with its \`awslambda\` global from the stand-in in
 * local/lambda/), invokes its handler once and reads its answer to the end, streamed or not, and prints it.
 */
const INVOKE = `
const [file, event, context, runtime, remaining] = process.argv.slice(1);
const deadline = Date.now() + Number(remaining);
const ctx = { ...JSON.parse(context), getRemainingTimeInMillis: () => deadline - Date.now() };
import(runtime).then(async (lambda) => {
  lambda.installLambdaStreamingRuntime();
  return lambda.invokeToEnd(require(file).handler, JSON.parse(event), ctx);
}).then(
  (answer) => process.stdout.write('\\nRESULT ' + JSON.stringify({ result: answer })),
  (error) => process.stdout.write('\\nRESULT ' + JSON.stringify({ error: String(error && error.message) })),
);`;

/** The Lambda streaming stand-in, imported by INVOKE with Node's own type stripping. */
const LAMBDA_RUNTIME = pathToFileURL(join(import.meta.dirname, '..', '..', 'local', 'lambda', 'streaming.ts')).href;

/** The credentials Lambda hands a function (its role's session), as environment variables. */
const LAMBDA_CREDENTIALS = {
  AWS_ACCESS_KEY_ID: 'ASIALAMBDAROLEKEY',
  AWS_SECRET_ACCESS_KEY: 'lambdaRoleSecret',
  AWS_SESSION_TOKEN: 'lambdaRoleSessionToken',
};

/** A SHA-256 (or HMAC-SHA-256 with a secret) for @smithy/signature-v4, on node:crypto. */
class NodeSha256 {
  private readonly hash;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: SourceData): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return this.hash.digest();
  }
}

function bytes(data: SourceData): string | Uint8Array {
  if (typeof data === 'string') return data;
  return ArrayBuffer.isView(data)
    ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
    : new Uint8Array(data as ArrayBuffer);
}

interface Recorded {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A DynamoDB stand-in that records each request and answers UpdateItem with a stored item. */
async function startRecordingEndpoint(): Promise<{ server: Server; url: string; requests: Recorded[] }> {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      res.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.0' });
      res.end('{"Attributes":{"petId":{"N":"2"},"quantity":{"N":"31"},"status":{"S":"pending"}}}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

describe('Bundles: every deployed function, as the stack bundles it (cdk synth assets), works over DynamoDB Local', () => {
  let stack: TestStack;
  let deployed: DeployedBundles;
  let home: string;

  beforeAll(async () => {
    stack = await startTestStack();
    deployed = synthesizeDeployedBundles();
    home = mkdtempSync(join(tmpdir(), 'petstore-home-'));
  }, 120_000);
  afterAll(async () => {
    deployed?.dispose();
    rmSync(home, { recursive: true, force: true });
    await stack.close();
  });

  /**
   * Invokes a bundle in a fresh process. `remainingMs` is the invocation's time left (what middy's time-out reads):
   * 10 s by default; the list's invocations that wait out throttling get a minute, as its 14-minute function would,
   * so that the SDK's random back-off on a loaded machine cannot run them into it.
   */
  async function invoke(
    handler: string,
    event: unknown,
    overrides: Record<string, string | undefined> = {},
    remainingMs = 10_000,
  ): Promise<{ result?: Record<string, unknown>; error?: string; logs: string }> {
    // Only what Lambda gives a function: its environment, with the role's credentials in AWS_* variables.
    const env: Record<string, string | undefined> = {
      PATH: process.env.PATH ?? '',
      // The stack sets no NODE_OPTIONS (no source maps at run time: infra/bundling.ts); none leaks in from here.
      NODE_OPTIONS: '',
      AWS_REGION: 'us-east-1',
      ...LAMBDA_CREDENTIALS,
      AWS_ENDPOINT_URL_DYNAMODB: process.env.AWS_ENDPOINT_URL_DYNAMODB ?? '',
      INVENTORY_TABLE_NAME: stack.tables.inventory,
      API_KEYS_TABLE_NAME: stack.tables.apiKeys,
      INVENTORY_HISTORY_TABLE_NAME: stack.tables.history,
      IDEMPOTENCY_TABLE_NAME: stack.tables.idempotency ?? '',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_METRICS_DISABLED: 'true',
      HOME: home,
      ...overrides,
    };
    const { stdout, stderr } = await run(
      process.execPath,
      [
        '-e',
        INVOKE,
        deployed.bundle(handler).file,
        JSON.stringify(event),
        JSON.stringify(aLambdaContext()),
        LAMBDA_RUNTIME,
        String(remainingMs),
      ],
      {
        env: Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined)),
        timeout: remainingMs + 10_000,
      },
    );
    const marker = stdout.lastIndexOf('\nRESULT ');
    return { ...JSON.parse(stdout.slice(marker + '\nRESULT '.length)), logs: stdout.slice(0, marker) + stderr };
  }

  /** The package sources a bundle's source map lists. */
  function bundledPackages(handler: string): string[] {
    const map = JSON.parse(readFileSync(`${deployed.bundle(handler).file}.map`, 'utf8')) as { sources: string[] };
    return [...new Set(map.sources.map((source) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(source)?.[1] ?? ''))];
  }

  it('bundles the AWS SDK DynamoDB client in each DynamoDB function, with no credential source but the environment', () => {
    for (const handler of DYNAMODB_FUNCTIONS) {
      const packages = bundledPackages(handler);
      expect([handler, packages]).toEqual([handler, expect.arrayContaining(['@aws-sdk/client-dynamodb'])]);
      expect([handler, packages]).toEqual([handler, expect.arrayContaining(['@aws-sdk/credential-provider-env'])]);
      for (const absent of [
        '@aws-sdk/credential-provider-node',
        '@aws-sdk/credential-provider-ini',
        '@aws-sdk/credential-provider-sso',
        '@smithy/credential-provider-imds',
      ])
        expect([handler, packages.includes(absent)]).toEqual([handler, false]);
    }
  });

  it('signs its DynamoDB calls with exactly the credentials Lambda provides in the environment', async () => {
    // Prepare
    const endpoint = await startRecordingEndpoint();
    try {
      // Act
      const { result } = await invoke('update-inventory', SET_PET_2_TO_31, { AWS_ENDPOINT_URL_DYNAMODB: endpoint.url });
      // Assess: the call went out, carried the session token, and its signature is the one SigV4 gives for
      // these credentials (recomputed with the SDK's own signer over the recorded request).
      expect(result?.statusCode).toBe(200);
      const request = endpoint.requests[0] as Recorded;
      expect(request.headers['x-amz-target']).toBe('DynamoDB_20120810.UpdateItem');
      expect(request.headers['x-amz-security-token']).toBe(LAMBDA_CREDENTIALS.AWS_SESSION_TOKEN);
      const authorization = String(request.headers.authorization);
      const credential = /Credential=([^/]+)\/(\d{8})\/us-east-1\/dynamodb\/aws4_request/.exec(authorization);
      expect(credential?.[1]).toBe(LAMBDA_CREDENTIALS.AWS_ACCESS_KEY_ID);
      const signedHeaders = (/SignedHeaders=([^,]+)/.exec(authorization)?.[1] ?? '').split(';');
      const amzDate = String(request.headers['x-amz-date']);
      const signer = new SignatureV4({
        service: 'dynamodb',
        region: 'us-east-1',
        sha256: NodeSha256,
        credentials: {
          accessKeyId: LAMBDA_CREDENTIALS.AWS_ACCESS_KEY_ID,
          secretAccessKey: LAMBDA_CREDENTIALS.AWS_SECRET_ACCESS_KEY,
          sessionToken: LAMBDA_CREDENTIALS.AWS_SESSION_TOKEN,
        },
      });
      const headers = Object.fromEntries(signedHeaders.map((name) => [name, String(request.headers[name])])) as Record<
        string,
        string
      >;
      const resigned = await signer.sign(
        {
          method: request.method,
          protocol: 'http:',
          hostname: '127.0.0.1',
          path: request.path,
          query: {},
          headers,
          body: request.body,
        },
        {
          signingDate: new Date(
            `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
          ),
          signableHeaders: new Set(signedHeaders),
        },
      );
      expect(/Signature=([0-9a-f]{64})/.exec(String(resigned.headers.authorization))?.[1]).toBe(
        /Signature=([0-9a-f]{64})/.exec(authorization)?.[1],
      );
    } finally {
      endpoint.server.close();
    }
  });

  it('does not read credential files: with keys only in ~/.aws/credentials the call fails (what the alias gives up)', async () => {
    // Prepare
    mkdirSync(join(home, '.aws'), { recursive: true });
    writeFileSync(
      join(home, '.aws', 'credentials'),
      '[default]\naws_access_key_id=local\naws_secret_access_key=local\n',
    );
    // Act
    const { result } = await invoke('update-inventory', SET_PET_2_TO_31, {
      AWS_ACCESS_KEY_ID: undefined,
      AWS_SECRET_ACCESS_KEY: undefined,
      AWS_SESSION_TOKEN: undefined,
    });
    // Assess
    expect(result?.statusCode).toBe(500);
    expect(String(result?.body)).not.toContain('credential');
  });

  /** The list bundle's GET /inventory through a stand-in endpoint, at a stage's pace. */
  const listAtStagePace = (endpointUrl: string) =>
    invoke(
      'list-inventory',
      LIST_INVENTORY,
      { AWS_ENDPOINT_URL_DYNAMODB: endpointUrl, LIST_READ_UNITS_PER_SECOND: '500' },
      60_000,
    );

  it("reads the list at its stage pace and waits out Query pages throttled past the SDK's retries", async () => {
    // Prepare: the first four Queries throttled, one more than the SDK's three attempts, at a stand-in endpoint.
    let refused = 0;
    const endpoint = await startThrottlingEndpoint(
      testEndpoint(),
      (operation) => operation === 'Query' && refused++ < 4,
    );
    try {
      // Act
      const { result, error } = await listAtStagePace(endpoint.url);
      // Assess: the whole list; every page asked for its consumed capacity, which the pace counts.
      expect(error).toBeUndefined();
      expect(result?.statusCode).toBe(200);
      expect(String(result?.body)).toContain(
        '{"petId":9223372036854775807,"quantity":2,"status":"pending","version":1}',
      );
      // Beside the pages, the one read of the feed's counter (the list's rel="changes").
      const queries = endpoint.calls.filter((call) => call.operation === 'Query');
      expect(endpoint.calls.map((call) => call.operation).sort()).toEqual(['GetItem', ...queries.map(() => 'Query')]);
      expect(queries.map((call) => call.throttled)).toEqual([true, true, true, true, false]);
      for (const call of queries) expect(JSON.parse(call.body)).toMatchObject({ ReturnConsumedCapacity: 'TOTAL' });
    } finally {
      await endpoint.close();
    }
  }, 90_000);

  it('updates an entry and answers the stored item', async () => {
    const { result } = await invoke('update-inventory', SET_PET_2_TO_31);
    expect(result).toMatchObject({ statusCode: 200, body: '{"petId":2,"quantity":31,"status":"pending","version":2}' });
  });

  it('authorizes a known key with a stage-wide policy and refuses an unknown one with exactly "Unauthorized"', async () => {
    const methodArn = 'arn:aws:execute-api:us-east-1:123456789012:api/v1/GET/inventory';
    const [accepted, refused] = await Promise.all([
      invoke('authorizer', tokenAuthorizerEvent(`Bearer ${stack.key}`, methodArn)),
      invoke('authorizer', tokenAuthorizerEvent('Bearer psk_nope', methodArn)),
    ]);
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
    expect(refused.error).toBe('Unauthorized');
  });

  it("logs a failure with the bundle's stack positions, which `stack map` with the asset's index.js.map turns into TypeScript positions", async () => {
    // Prepare: a table that does not exist is a defect (500), logged at error level with its stack.
    const event = anApiGatewayEvent({ pathParameters: { petId: '2' }, body: '{"quantity":1}' });
    // Act
    const { result, logs } = await invoke('update-inventory', event, {
      INVENTORY_TABLE_NAME: 'no-such-table',
      POWERTOOLS_LOG_LEVEL: 'ERROR',
    });
    // Assess
    expect(result?.statusCode).toBe(500);
    // Unmapped at run time: the positions are the minified bundle's.
    expect(logs).toMatch(/index\.js:\d+:\d+/);
    expect(logs).not.toMatch(/functions\/store\/inventory-table\.ts:\d+:\d+/);
    // Mapped afterwards by the operator's command, from the map the asset ships.
    const map = new SourceMap(JSON.parse(readFileSync(`${deployed.bundle('update-inventory').file}.map`, 'utf8')));
    expect(mapBundlePositions(logs, map)).toMatch(/functions\/store\/inventory-table\.ts:\d+:\d+/);
  });

  it('records a stock change from a DynamoDB stream event into the history table, and answers it over the API, int64 petId exact', async () => {
    // Prepare: the record Lambda would deliver for a PATCH of pet 9223372036854775807 from 2 to 5.
    const lastChange = {
      M: {
        source: { S: 'api' },
        actor: { S: 'key_bundle' },
        requestId: { S: 'req-b' },
        at: { S: '2026-11-23T10:00:00.000Z' },
        reason: { S: 'received' },
        reference: { S: 'delivery 4411' },
      },
    };
    const image = (quantity: number) => ({
      petId: { N: '9223372036854775807' },
      quantity: { N: String(quantity) },
      status: { S: 'pending' },
    });
    const event = {
      Records: [
        {
          eventID: 'e1',
          eventName: 'MODIFY',
          eventSource: 'aws:dynamodb',
          dynamodb: {
            ApproximateCreationDateTime: 1_795_430_000,
            Keys: { petId: { N: '9223372036854775807' } },
            OldImage: image(2),
            NewImage: { ...image(5), lastChange },
            SequenceNumber: '4000000000000000000001',
            StreamViewType: 'NEW_AND_OLD_IMAGES',
          },
        },
      ],
    };
    // Act
    const started = new Date().toISOString();
    const { result, error } = await invoke('record-history', event);
    // Assess
    expect(error).toBeUndefined();
    expect(result).toMatchObject({ batchItemFailures: [] });
    const rows = await new HistoryTable({ client: stack.client, tableName: stack.tables.history }).listFor(
      '9223372036854775807',
    );
    // The API answers the row as stored, without the petId its path names; its time, when it took its place.
    expect((rows[0]?.at ?? '') >= started).toBe(true);
    const recorded = {
      at: rows[0]?.at,
      previousQuantity: 2,
      quantity: 5,
      previousStatus: 'pending',
      status: 'pending',
      source: 'api',
      actor: 'key_bundle',
      requestId: 'req-b',
      reason: 'received',
      reference: 'delivery 4411',
    };
    expect(rows).toEqual([{ petId: '9223372036854775807', ...recorded }]);
    const read = await invoke(
      'list-inventory-history',
      anApiGatewayEvent({
        httpMethod: 'GET',
        resource: '/inventory/{petId}/history',
        pathParameters: { petId: '9223372036854775807' },
        body: null,
      }),
    );
    expect(read.result?.statusCode).toBe(200);
    expect(JSON.parse(String(read.result?.body))).toEqual([recorded]);
  });

  it('answers the 501 routes', async () => {
    const answers = await Promise.all(
      ['get-pet', 'list-store-orders'].map((handler) =>
        invoke(handler, anApiGatewayEvent({ httpMethod: 'GET', body: null })),
      ),
    );
    for (const { result } of answers) expect(result?.statusCode).toBe(501);
  });
});
