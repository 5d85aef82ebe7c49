import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  ScanCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { Sha256Node } from '@smithy/core/checksum';
import { HttpRequest } from '@smithy/core/protocols';
import { SignatureV4 } from '@smithy/signature-v4';
import { createLeanDynamoClient, type LeanDynamoClient } from '../../functions/store/lean-dynamodb';
import { signRequest } from '../../functions/store/sigv4';
import { isStorageUnavailable } from '../../functions/store/storage-errors';
import { freePort } from '../../infra/local/dynamodb-local';
import { rejection } from '../helpers/rejection';

/** One request as the fake DynamoDB received it. */
interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  socket: Socket;
}

/** A canned answer of the fake DynamoDB; `hang` never answers. */
type Answer = { status: number; body: string; headers?: Record<string, string> } | 'hang';

/** A fake DynamoDB endpoint on loopback that records requests and answers from a queue (then `{}`). */
async function startFake(): Promise<{
  url: string;
  received: Received[];
  answers: Answer[];
  close(): Promise<void>;
}> {
  const received: Received[] = [];
  const answers: Answer[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), socket: req.socket });
      const answer = answers.shift() ?? { status: 200, body: '{}' };
      if (answer === 'hang') return;
      res.writeHead(answer.status, {
        'content-type': 'application/x-amz-json-1.0',
        'x-amzn-requestid': `req-${received.length}`,
        ...answer.headers,
      });
      res.end(answer.body);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    answers,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

const CREDENTIALS = {
  accessKeyId: 'ASIAEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  sessionToken: 'IQoJb3JpZ2luX2VjEP//////////wEaCXVz+/=',
};
const REGION = 'eu-west-1';

/** The four operations, each with an input using every member the adapters use. */
const CALLS = [
  {
    operation: 'Scan',
    input: {
      TableName: 'inventory',
      ConsistentRead: true,
      Segment: 2,
      TotalSegments: 4,
      ProjectionExpression: 'petId, quantity, #status',
      ExpressionAttributeNames: { '#status': 'status' },
      ExclusiveStartKey: { petId: { N: '9223372036854775807' } },
    },
    sdk: (input: object) => new ScanCommand(input as never),
    lean: (client: LeanDynamoClient, input: object) => client.scan(input as never),
  },
  {
    operation: 'UpdateItem',
    input: {
      TableName: 'inventory',
      Key: { petId: { N: '-9223372036854775808' } },
      UpdateExpression: 'SET quantity = :quantity',
      ConditionExpression: 'attribute_exists(petId)',
      ExpressionAttributeValues: { ':quantity': { N: '2147483647' } },
      ReturnValues: 'ALL_NEW',
    },
    sdk: (input: object) => new UpdateItemCommand(input as never),
    lean: (client: LeanDynamoClient, input: object) => client.updateItem(input as never),
  },
  {
    operation: 'GetItem',
    input: { TableName: 'api-keys', Key: { keyHash: { S: 'ab'.repeat(32) } }, ConsistentRead: true },
    sdk: (input: object) => new GetItemCommand(input as never),
    lean: (client: LeanDynamoClient, input: object) => client.getItem(input as never),
  },
  {
    operation: 'PutItem',
    input: {
      TableName: 'api-keys',
      Item: {
        keyHash: { S: 'cd'.repeat(32) },
        name: { S: 'Zoë’s key 🐕' },
        createdAt: { S: '2026-11-22T00:00:00.000Z' },
      },
      ConditionExpression: 'attribute_not_exists(keyHash)',
    },
    sdk: (input: object) => new PutItemCommand(input as never),
    lean: (client: LeanDynamoClient, input: object) => client.putItem(input as never),
  },
] as const;

/** The header names a request's Authorization says it signed. */
function signedHeaders(headers: IncomingHttpHeaders): string[] {
  return /SignedHeaders=([^,]+),/.exec(String(headers.authorization))?.[1]?.split(';') ?? [];
}

/** `20261122T010203Z` as a Date. */
function amzDate(value: unknown): Date {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(String(value));
  if (!m) throw new Error(`not an x-amz-date: ${String(value)}`);
  return new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`);
}

describe('Lean DynamoDB: the wire protocol, against the AWS SDK and a fake endpoint', () => {
  let fake: Awaited<ReturnType<typeof startFake>>;
  let lean: LeanDynamoClient;
  let sdk: DynamoDBClient;

  beforeEach(async () => {
    fake = await startFake();
    lean = createLeanDynamoClient({
      endpoint: fake.url,
      region: REGION,
      credentials: CREDENTIALS,
      maxAttempts: 3,
      requestTimeoutMs: 500,
      connectionTimeoutMs: 300,
      random: () => 0.5,
    });
    sdk = new DynamoDBClient({ endpoint: fake.url, region: REGION, credentials: CREDENTIALS, maxAttempts: 1 });
  });
  afterEach(async () => {
    lean.destroy();
    sdk.destroy();
    await fake.close();
  });

  it.each(CALLS)(
    "sends $operation as the SDK does: same target, content type and JSON body; signed headers a subset of the SDK's",
    async (call) => {
      // Act
      await sdk.send(call.sdk(call.input) as never);
      await call.lean(lean, call.input);
      // Assess
      const [fromSdk, fromLean] = fake.received;
      if (!fromSdk || !fromLean) throw new Error('expected two requests');
      expect(fromLean.headers['x-amz-target']).toBe(fromSdk.headers['x-amz-target']);
      expect(fromLean.headers['x-amz-target']).toBe(`DynamoDB_20120810.${call.operation}`);
      expect(fromLean.headers['content-type']).toBe(fromSdk.headers['content-type']);
      expect(JSON.parse(fromLean.body)).toEqual(JSON.parse(fromSdk.body));
      expect(fromLean.headers.host).toBe(fromSdk.headers.host);
      expect(fromLean.headers['x-amz-security-token']).toBe(CREDENTIALS.sessionToken);
      // Members may come in another order than the SDK's (same JSON value), so the payload hash is of our body.
      expect(fromLean.headers['x-amz-content-sha256']).toBe(createHash('sha256').update(fromLean.body).digest('hex'));
      const sdkSigned = signedHeaders(fromSdk.headers);
      expect(signedHeaders(fromLean.headers)).toEqual(
        sdkSigned.filter((name) => !['amz-sdk-invocation-id', 'amz-sdk-request', 'x-amz-user-agent'].includes(name)),
      );
    },
  );

  it.each(CALLS)(
    "reproduces the SDK's own Authorization for its $operation request (same date, same signed headers)",
    async (call) => {
      await sdk.send(call.sdk(call.input) as never);
      const [fromSdk] = fake.received;
      if (!fromSdk) throw new Error('expected a request');
      const toSign: Record<string, string> = {};
      for (const name of signedHeaders(fromSdk.headers))
        if (!['host', 'x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256'].includes(name))
          toSign[name] = String(fromSdk.headers[name]);
      const ours = signRequest(
        { host: String(fromSdk.headers.host), headers: toSign, body: fromSdk.body },
        { region: REGION, service: 'dynamodb', credentials: CREDENTIALS, date: amzDate(fromSdk.headers['x-amz-date']) },
      );
      expect(ours.authorization).toBe(fromSdk.headers.authorization);
    },
  );

  it('sends requests whose signature @smithy/signature-v4 verifies from the bytes received (host with port, length, body)', async () => {
    for (const call of CALLS) await call.lean(lean, call.input);
    expect(fake.received).toHaveLength(CALLS.length);
    const [host, port] = String(fake.received[0]?.headers.host).split(':');
    for (const received of fake.received) {
      const headers: Record<string, string> = {};
      for (const name of signedHeaders(received.headers)) headers[name] = String(received.headers[name]);
      expect(Number(headers['content-length'])).toBe(Buffer.byteLength(received.body));
      const signer = new SignatureV4({
        service: 'dynamodb',
        region: REGION,
        credentials: CREDENTIALS,
        sha256: Sha256Node,
      });
      const verified = await signer.sign(
        new HttpRequest({
          method: 'POST',
          protocol: 'http:',
          hostname: host,
          port: Number(port),
          path: '/',
          query: {},
          headers,
          body: received.body,
        }),
        { signingDate: amzDate(received.headers['x-amz-date']) },
      );
      expect(verified.headers.authorization).toBe(received.headers.authorization);
    }
  });

  it('keeps the connection alive between calls', async () => {
    for (let i = 0; i < 5; i++) await lean.getItem(CALLS[2].input);
    expect(new Set(fake.received.map((r) => r.socket)).size).toBe(1);
  });

  it('returns the parsed output with $metadata (status, request id, attempts)', async () => {
    fake.answers.push({
      status: 200,
      body: JSON.stringify({ Item: { petId: { N: '9223372036854775807' }, note: { S: 'ü 🐕' } } }),
    });
    const output = await lean.getItem(CALLS[2].input);
    expect(output.Item).toEqual({ petId: { N: '9223372036854775807' }, note: { S: 'ü 🐕' } });
    expect(output.$metadata).toMatchObject({
      httpStatusCode: 200,
      requestId: 'req-1',
      attempts: 1,
      totalRetryDelay: 0,
    });
  });

  describe('errors: named and classified as the SDK names and classifies them', () => {
    const TYPE = 'com.amazonaws.dynamodb.v20120810#';
    const cases: {
      answer: { status: number; body: string; headers?: Record<string, string> };
      name: string;
      retried: boolean;
    }[] = [
      {
        answer: {
          status: 400,
          body: JSON.stringify({
            __type: `${TYPE}ConditionalCheckFailedException`,
            message: 'The conditional request failed',
          }),
        },
        name: 'ConditionalCheckFailedException',
        retried: false,
      },
      {
        answer: {
          status: 400,
          body: JSON.stringify({ __type: `${TYPE}ResourceNotFoundException`, message: 'Requested resource not found' }),
        },
        name: 'ResourceNotFoundException',
        retried: false,
      },
      {
        answer: {
          status: 400,
          body: JSON.stringify({ __type: 'com.amazon.coral.validate#ValidationException', message: 'bad' }),
        },
        name: 'ValidationException',
        retried: false,
      },
      {
        answer: {
          status: 400,
          body: JSON.stringify({
            __type: `${TYPE}ProvisionedThroughputExceededException`,
            message: 'The level of configured provisioned throughput for the table was exceeded.',
          }),
        },
        name: 'ProvisionedThroughputExceededException',
        retried: true,
      },
      {
        answer: {
          status: 400,
          body: JSON.stringify({
            __type: 'com.amazon.coral.availability#ThrottlingException',
            Message: 'Rate of requests exceeds the allowed throughput.',
          }),
        },
        name: 'ThrottlingException',
        retried: true,
      },
      {
        answer: {
          status: 400,
          body: JSON.stringify({
            __type: `${TYPE}RequestLimitExceeded`,
            message: 'Throughput exceeds the current throughput limit for your account.',
          }),
        },
        name: 'RequestLimitExceeded',
        retried: true,
      },
      {
        answer: {
          status: 500,
          body: JSON.stringify({ __type: `${TYPE}InternalServerError`, message: 'Internal server error' }),
        },
        name: 'InternalServerError',
        retried: true,
      },
      {
        answer: {
          status: 400,
          body: '',
          headers: {
            'x-amzn-errortype':
              'UnrecognizedClientException:http://internal.amazon.com/coral/com.amazon.coral.service/',
          },
        },
        name: 'UnrecognizedClientException',
        retried: false,
      },
      {
        answer: {
          status: 400,
          body: JSON.stringify({
            __type: 'com.amazon.coral.service#InvalidSignatureException',
            message: 'The request signature we calculated does not match',
          }),
        },
        name: 'InvalidSignatureException',
        retried: false,
      },
    ];

    it.each(cases)('$name (retried: $retried)', async ({ answer, name, retried }) => {
      // SDK, one attempt
      fake.answers.push(answer);
      const sdkError = await sdk.send(new GetItemCommand(CALLS[2].input)).catch((error: unknown) => error as Error);
      // Lean, up to 3 attempts, every one answered the same
      fake.answers.push(answer, answer, answer);
      const leanError = await lean.getItem(CALLS[2].input).catch((error: unknown) => error as Error);
      // Assess
      expect(sdkError).toBeInstanceOf(Error);
      expect(leanError).toBeInstanceOf(Error);
      expect((leanError as Error).name).toBe(name);
      expect((leanError as Error).name).toBe((sdkError as Error).name);
      if (answer.body) expect((leanError as Error).message).toBe((sdkError as Error).message);
      expect((leanError as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode).toBe(answer.status);
      expect(isStorageUnavailable(leanError)).toBe(isStorageUnavailable(sdkError));
      expect(fake.received.length - 1).toBe(retried ? 3 : 1);
    });

    it('classifies a 503 that is not DynamoDB JSON (a proxy) as unavailable, as the SDK error is', async () => {
      const answer = {
        status: 503,
        body: '<html>Service Unavailable</html>',
        headers: { 'content-type': 'text/html' },
      };
      fake.answers.push(answer);
      const sdkError = await sdk.send(new GetItemCommand(CALLS[2].input)).catch((error: unknown) => error);
      fake.answers.push(answer, answer, answer);
      const leanError = await lean.getItem(CALLS[2].input).catch((error: unknown) => error);
      expect(isStorageUnavailable(sdkError)).toBe(true);
      expect(isStorageUnavailable(leanError)).toBe(true);
      expect((leanError as { $metadata: { attempts: number } }).$metadata.attempts).toBe(3);
    });
  });

  it('retries throttling with back-off and succeeds when DynamoDB recovers', async () => {
    const throttled = {
      status: 400,
      body: JSON.stringify({
        __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
        message: 'slow down',
      }),
    };
    fake.answers.push(throttled, throttled, {
      status: 200,
      body: JSON.stringify({ Items: [], Count: 0, ScannedCount: 0 }),
    });
    const output = await lean.scan(CALLS[0].input);
    expect(output.Count).toBe(0);
    // random() = 0.5: 0.5 × 500 ms × 2 then × 4
    expect(output.$metadata).toMatchObject({ attempts: 3, totalRetryDelay: 500 + 1000 });
  });

  it('turns a DynamoDB that accepts the connection but never answers into a TimeoutError, after maxAttempts × requestTimeout', async () => {
    fake.answers.push('hang', 'hang', 'hang');
    const started = Date.now();
    const error = await rejection(lean.scan(CALLS[0].input));
    const ms = Date.now() - started;
    expect(error.name).toBe('TimeoutError');
    expect(isStorageUnavailable(error)).toBe(true);
    expect(fake.received).toHaveLength(3);
    // 3 × 500 ms plus back-off of 0.5 × 100 × (2 + 4) = 300 ms; slack for a busy machine.
    expect(ms).toBeGreaterThanOrEqual(1500);
    expect(ms).toBeLessThan(4000);
  });

  it('turns a refused connection into an error the service classifies as unavailable, quickly', async () => {
    const dead = createLeanDynamoClient({
      endpoint: `http://127.0.0.1:${await freePort()}`,
      region: REGION,
      credentials: CREDENTIALS,
      maxAttempts: 2,
      random: () => 0,
    });
    const started = Date.now();
    const error = await rejection(dead.getItem(CALLS[2].input));
    expect(error.code).toBe('ECONNREFUSED');
    expect(isStorageUnavailable(error)).toBe(true);
    expect(Date.now() - started).toBeLessThan(1000);
    dead.destroy();
  });
});
