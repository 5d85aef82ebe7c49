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
import { jsonHeaders } from '../helpers/http';
import { putItems } from '../helpers/local-stack';
import { closeRawAgent, type RawResponse, rawRequest } from '../helpers/raw-http';

/** The SDK budget the functions get in this file: 2 attempts of at most 1 s each. */
const FAULT_ENV = {
  DYNAMODB_MAX_ATTEMPTS: '2',
  DYNAMODB_REQUEST_TIMEOUT_MS: '1000',
  DYNAMODB_CONNECTION_TIMEOUT_MS: '500',
};
/** What "a bounded time" means here: the SDK budget plus back-off, with slack for a loaded machine. */
const BOUND_MS = 8000;

describe('Reliability: DynamoDB paused, stopped and back, through the local gateway', () => {
  // This file runs its own DynamoDB Local (persistent, fixed port) so that pausing it disturbs no other test.
  let dataDir: string;
  let port: number;
  let dynamo: DynamoDbLocal;
  let gateway: LocalGateway;
  let key: string;
  const saved: Record<string, string | undefined> = {};
  const figures: string[] = [];

  async function startDynamo(): Promise<DynamoDbLocal> {
    return startDynamoDbLocal({ port, dataDir });
  }

  beforeAll(async () => {
    for (const [name, value] of Object.entries(FAULT_ENV)) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
    dataDir = mkdtempSync(join(tmpdir(), 'petstore-faults-'));
    port = await freePort();
    dynamo = await startDynamo();
    const client = createDynamoClient({ endpoint: dynamo.endpoint });
    await ensureTables(client, LOCAL_TABLE_NAMES);
    await putItems(client, LOCAL_TABLE_NAMES.inventory, [{ petId: '1', quantity: 1, status: 'available' }]);
    const generated = generateApiKey('faults');
    await new ApiKeyTable({ client, tableName: LOCAL_TABLE_NAMES.apiKeys }).create(generated.record);
    client.destroy();
    key = generated.key;
    configureFunctionEnvironment(dynamo.endpoint, LOCAL_TABLE_NAMES);
    gateway = await startLocalGateway(0, { log: () => undefined });
  });

  afterAll(async () => {
    closeRawAgent();
    await gateway?.close();
    if (dynamo?.process.signalCode === 'SIGSTOP') dynamo.process.kill('SIGCONT');
    await dynamo?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    console.log(`storage faults: ${figures.join('; ')}`);
  });

  const list = () =>
    rawRequest(gateway.url, { method: 'GET', path: '/v1/inventory', headers: { Authorization: `Bearer ${key}` } });
  const update = (quantity: number) =>
    rawRequest(gateway.url, {
      method: 'PATCH',
      path: '/v1/inventory/1',
      headers: jsonHeaders({ Authorization: `Bearer ${key}` }),
      body: JSON.stringify({ quantity }),
    });

  async function timed(send: () => Promise<RawResponse>): Promise<{ response: RawResponse; ms: number }> {
    const started = Date.now();
    const response = await send();
    return { response, ms: Date.now() - started };
  }

  function expectUnavailable(response: RawResponse): void {
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('1');
    expect(response.headers['content-type']).toBe('application/json');
    expect(JSON.parse(response.text)).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    expect(response.text).not.toMatch(/Timeout|ECONN|socket|Exception|at /);
  }

  /** Polls until a call answers 200; returns how long it took. Bounded. */
  async function timeToRecover(send: () => Promise<RawResponse>): Promise<number> {
    const started = Date.now();
    while (Date.now() - started < 30_000) {
      if ((await send()).status === 200) return Date.now() - started;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('did not recover within 30 s');
  }

  it('answers 200 while storage is healthy (and warms the authorizer cache)', async () => {
    expect((await list()).status).toBe(200);
    expect((await update(2)).status).toBe(200);
  });

  it('answers list and update with 503 SERVICE_UNAVAILABLE and Retry-After within the bound while DynamoDB is paused', async () => {
    // Prepare
    dynamo.process.kill('SIGSTOP');
    // Act
    const listed = await timed(list);
    const updated = await timed(() => update(3));
    // Assess
    expectUnavailable(listed.response);
    expectUnavailable(updated.response);
    expect(listed.ms).toBeLessThan(BOUND_MS);
    expect(updated.ms).toBeLessThan(BOUND_MS);
    figures.push(`paused: 503 after ${listed.ms} ms (list), ${updated.ms} ms (update)`);
  });

  it('recovers by itself when DynamoDB resumes, without restarting anything', async () => {
    dynamo.process.kill('SIGCONT');
    const ms = await timeToRecover(list);
    expect((await update(4)).status).toBe(200);
    figures.push(`resumed: first 200 after ${ms} ms`);
  });

  it('answers 503 quickly while DynamoDB is stopped, and recovers when it is started again on the same port', async () => {
    // Prepare
    await dynamo.stop();
    // Act
    const listed = await timed(list);
    const updated = await timed(() => update(5));
    // Assess
    expectUnavailable(listed.response);
    expectUnavailable(updated.response);
    expect(Math.max(listed.ms, updated.ms)).toBeLessThan(BOUND_MS);
    // Act: storage returns; the gateway and its handlers are the same processes as before.
    const restartedAt = Date.now();
    dynamo = await startDynamo();
    const ms = await timeToRecover(list);
    // Assess: the data survived and updates work again.
    const body = JSON.parse((await update(6)).text);
    expect(body).toEqual({ petId: 1, quantity: 6, status: 'available' });
    figures.push(
      `stopped: 503 after ${listed.ms} ms (list), ${updated.ms} ms (update); back ${Date.now() - restartedAt} ms after restart began, first 200 ${ms} ms after DynamoDB answered`,
    );
  });

  it('answers with a JSON Error body (503 SERVICE_UNAVAILABLE) when the keys table cannot be read during authorization', async () => {
    // Prepare: no cached decision, storage down.
    gateway.clearAuthorizerCache();
    await dynamo.stop();
    // Act
    const { response, ms } = await timed(list);
    // Assess
    expectUnavailable(response);
    expect(ms).toBeLessThan(BOUND_MS);
    figures.push(`keys table down: 503 after ${ms} ms`);
    dynamo = await startDynamo();
    await timeToRecover(list);
  });
});
