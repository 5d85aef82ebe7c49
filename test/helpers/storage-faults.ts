import { connect, createServer, type Server, type Socket } from 'node:net';
import { generateApiKey } from '../../functions/api-keys/key';
import { ApiKeyTable } from '../../functions/store/api-key-table';
import { configureFunctionEnvironment } from '../../local/environment';
import { type LocalGateway, startLocalGateway } from '../../local/gateway';
import { jsonHeaders } from './http';
import { freshTables, putItems, testClient, testEndpoint } from './local-stack';
import { closeRawAgent, type RawResponse, rawRequest } from './raw-http';

/** The SDK budget the functions get under faults: 2 attempts of at most 1 s each. */
const FAULT_ENV = {
  DYNAMODB_MAX_ATTEMPTS: '2',
  DYNAMODB_REQUEST_TIMEOUT_MS: '1000',
  DYNAMODB_CONNECTION_TIMEOUT_MS: '500',
};

/**
 * The local gateway whose functions reach DynamoDB Local through a TCP stand-in on a port of their own, where a test
 * makes storage fail as a client meets it: paused (connections accepted, nothing answered, as from a stopped
 * process) or stopped (nothing listening on the port), and back on the same port. The DynamoDB Local behind it is the
 * one every test shares; only this file's functions are cut off from it.
 */
export interface FaultStack {
  gateway: LocalGateway;
  list(): Promise<RawResponse>;
  update(quantity: number): Promise<RawResponse>;
  /** `GET /inventory/1/history`: the entry's read and its history's, at once. */
  history(): Promise<RawResponse>;
  /** Storage accepts connections and never answers (what a SIGSTOP'd DynamoDB Local gives a client). */
  pause(): void;
  /** Nothing listens on storage's port; every open connection to it is closed. */
  stop(): Promise<void>;
  /** Whatever a test left, storage listening and answering again, and the gateway's answers 200 again. */
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
  const client = testClient();
  const tables = await freshTables(client);
  await putItems(client, tables.inventory, [{ petId: '1', quantity: 1, status: 'available' }]);
  const generated = generateApiKey('faults');
  await new ApiKeyTable({ client, tableName: tables.apiKeys }).create(generated.record);
  client.destroy();
  const storage = await startStorageLine(testEndpoint());
  const auth = { Authorization: `Bearer ${generated.key}` };
  configureFunctionEnvironment(storage.endpoint, tables);
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
  return {
    gateway,
    list,
    update,
    history,
    pause: () => storage.pause(),
    stop: () => storage.stop(),
    heal: async () => {
      await storage.resume();
      // Bounded only so that a broken stack ends the run; the test's own timeout is the real limit.
      for (let tries = 0; (await list()).status !== 200; tries++) {
        if (tries > 300) throw new Error('the gateway did not answer 200 again');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    close: async () => {
      closeRawAgent();
      await gateway.close();
      await storage.stop();
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    },
  };
}

/** Storage as a client reaches it at `endpoint`, which a test can pause, stop and bring back. */
export interface StorageLine {
  endpoint: string;
  /** Connections are accepted and nothing is answered. */
  pause(): void;
  /** Nothing listens on the port; every open connection is closed. */
  stop(): Promise<void>;
  /** Listening on the same port and answering again. */
  resume(): Promise<void>;
}

/**
 * A TCP stand-in for DynamoDB Local at `target`, on a loopback port of its own that it keeps: it passes bytes both
 * ways, or (paused) accepts connections and passes nothing, or (stopped) does not listen at all.
 */
export async function startStorageLine(target: string): Promise<StorageLine> {
  const { hostname, port: targetPort } = new URL(target);
  const sockets = new Set<Socket>();
  let paused = false;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  /** Passes what one side sends to the other unless paused; what comes in while paused is never delivered. */
  const forward = (from: Socket, to: Socket) => {
    from.on('data', (chunk: Buffer) => {
      if (!paused) to.write(chunk);
    });
    from.on('close', () => to.destroy());
  };
  const onConnection = (client: Socket) => {
    track(client);
    // A connection opened while paused is never answered: the client gives up on it (its request time-out).
    if (paused) return;
    const upstream = connect({ host: hostname, port: Number(targetPort) });
    track(upstream);
    forward(client, upstream);
    forward(upstream, client);
  };
  const listen = (server: Server, port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        const address = server.address();
        resolve(typeof address === 'object' && address ? address.port : port);
      });
    });
  let server: Server | undefined = createServer(onConnection);
  const port = await listen(server, 0);
  return {
    endpoint: `http://127.0.0.1:${port}`,
    pause: () => {
      paused = true;
    },
    stop: async () => {
      const stopping = server;
      server = undefined;
      for (const socket of sockets) socket.destroy();
      if (stopping) await new Promise((resolve) => stopping.close(resolve));
    },
    resume: async () => {
      paused = false;
      if (!server) {
        server = createServer(onConnection);
        await listen(server, port);
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
