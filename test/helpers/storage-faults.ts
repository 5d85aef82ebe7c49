import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateApiKey } from '../../functions/api-keys/key';
import { ApiKeyTable } from '../../functions/store/api-key-table';
import { createDynamoClient } from '../../functions/store/dynamo-client';
import { type DynamoDbLocal, freePort, startDynamoDbLocal } from '../../local/dynamodb-local';
import { configureFunctionEnvironment } from '../../local/environment';
import { type LocalGateway, startLocalGateway } from '../../local/gateway';
import { ensureTables } from '../../local/tables';
import { LOCAL_TABLE_NAMES } from '../../service/local-dynamodb';
import { jsonHeaders } from './http';
import { putItems } from './local-stack';
import { closeRawAgent, type RawResponse, rawRequest } from './raw-http';

/** The SDK budget the functions get under faults: 2 attempts of at most 1 s each. */
const FAULT_ENV = {
  DYNAMODB_MAX_ATTEMPTS: '2',
  DYNAMODB_REQUEST_TIMEOUT_MS: '1000',
  DYNAMODB_CONNECTION_TIMEOUT_MS: '500',
};

/**
 * The local gateway over a DynamoDB Local of its own (persistent, fixed port), so that a test can pause, stop and
 * restart storage without disturbing any other test.
 */
export interface FaultStack {
  gateway: LocalGateway;
  list(): Promise<RawResponse>;
  update(quantity: number): Promise<RawResponse>;
  /** `GET /inventory/1/history`: the entry's read and its history's, at once. */
  history(): Promise<RawResponse>;
  /** SIGSTOP: DynamoDB Local accepts connections and never answers. */
  pause(): void;
  /** Stops DynamoDB Local: nothing listens on its port. */
  stop(): Promise<void>;
  /** Whatever a test left, DynamoDB Local running and answering again, and the gateway's answers 200 again. */
  heal(): Promise<void>;
  close(): Promise<void>;
}

export async function startFaultStack(
  options: { functionTimeoutMs?: (handler: string) => number } = {},
): Promise<FaultStack> {
  const saved: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(FAULT_ENV)) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'petstore-faults-'));
  const port = await freePort();
  let dynamo: DynamoDbLocal | undefined = await startDynamoDbLocal({ port, dataDir });
  const client = createDynamoClient({ endpoint: dynamo.endpoint });
  await ensureTables(client, LOCAL_TABLE_NAMES);
  await putItems(client, LOCAL_TABLE_NAMES.inventory, [{ petId: '1', quantity: 1, status: 'available' }]);
  const generated = generateApiKey('faults');
  await new ApiKeyTable({ client, tableName: LOCAL_TABLE_NAMES.apiKeys }).create(generated.record);
  client.destroy();
  const auth = { Authorization: `Bearer ${generated.key}` };
  configureFunctionEnvironment(dynamo.endpoint, LOCAL_TABLE_NAMES);
  const gateway = await startLocalGateway(0, {
    log: () => undefined,
    ...(options.functionTimeoutMs ? { functionTimeoutMs: options.functionTimeoutMs } : {}),
  });

  const list = () => rawRequest(gateway.url, { method: 'GET', path: '/v1/inventory', headers: auth });
  const update = (quantity: number) =>
    rawRequest(gateway.url, {
      method: 'PATCH',
      path: '/v1/inventory/1',
      headers: jsonHeaders(auth),
      body: JSON.stringify({ quantity }),
    });
  const history = () => rawRequest(gateway.url, { method: 'GET', path: '/v1/inventory/1/history', headers: auth });
  // A stopped (SIGSTOP) child is still running as far as ChildProcess can tell: its state is kept here.
  let paused = false;
  const resume = () => {
    if (paused) dynamo?.process.kill('SIGCONT');
    paused = false;
  };
  const stop = async () => {
    resume();
    await dynamo?.stop();
    dynamo = undefined;
  };
  return {
    gateway,
    list,
    update,
    history,
    pause: () => {
      paused = dynamo?.process.kill('SIGSTOP') === true;
    },
    stop,
    heal: async () => {
      resume();
      if (!dynamo || dynamo.process.exitCode !== null || dynamo.process.signalCode !== null)
        dynamo = await startDynamoDbLocal({ port, dataDir });
      // Bounded only so that a broken stack ends the run; the test's own timeout is the real limit.
      for (let tries = 0; (await list()).status !== 200; tries++) {
        if (tries > 300) throw new Error('the gateway did not answer 200 again');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    close: async () => {
      closeRawAgent();
      await gateway.close();
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    },
  };
}

/** The Error body of storage trouble: 503 SERVICE_UNAVAILABLE, Retry-After, nothing of the SDK's or the socket's. */
export function expectUnavailable(response: RawResponse): void {
  expect(response.status).toBe(503);
  expect(response.headers['retry-after']).toBe('1');
  expect(response.headers['content-type']).toBe('application/json');
  expect(JSON.parse(response.text)).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
  expect(response.text).not.toMatch(/Timeout|ECONN|socket|Exception|at /);
}
