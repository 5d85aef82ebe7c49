import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '../../local/dynamodb-local';

const PROJECT_ROOT = join(import.meta.dirname, '..', '..');

/** A running `npm start` in a child process (its own DynamoDB Local included). */
export interface LocalApiProcess {
  child: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Base URL ending in `/v1`. */
  baseUrl: string;
  /** The API key it registered (printed once at start). */
  apiKey: string;
  dynamoPort: number;
  /** The DynamoDB Local it started, for seeding and inspection. */
  dynamoEndpoint: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGINT, as Ctrl-C; resolves when it exited (or was killed after `timeoutMs`). */
  stop(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Last resort: kills it and the DynamoDB Local it started (same process group). */
  kill(): void;
}

/** Options of {@link startLocalApiProcess}. */
export interface LocalApiProcessOptions {
  /** Environment over this process's (e.g. `PETSTORE_SEED: '0'`, `PETSTORE_RATE_LIMIT: '0'`). */
  env?: Record<string, string>;
  /** @default 90000 */
  readyTimeoutMs?: number;
}

/**
 * Starts `npm start`'s script (`tsx local/start.ts`) in memory on free ports and resolves on its ready line.
 * `node --import tsx` is what `tsx` runs, without a wrapper process between a caller's signal and the script.
 */
export async function startLocalApiProcess(options: LocalApiProcessOptions = {}): Promise<LocalApiProcess> {
  const [port, dynamoPort] = [await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PETSTORE_IN_MEMORY: '1',
    PORT: String(port),
    DYNAMODB_PORT: String(dynamoPort),
    ...options.env,
  };
  if (options.env?.PETSTORE_API_KEY === undefined) delete env.PETSTORE_API_KEY;
  const child = spawn(process.execPath, ['--import', 'tsx', join('local', 'start.ts')], {
    cwd: PROJECT_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const kill = () => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  };
  const stop = async (timeoutMs = 20_000) => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      exited,
      new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (outcome !== 'timeout') return outcome;
    kill();
    return exited;
  };
  const readyTimeoutMs = options.readyTimeoutMs ?? 90_000;
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    const ready = /Pet Store Inventory API ready on (http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(output);
    const key = /API key(?: \(new\))?: (psk_[A-Za-z0-9_-]{43})/.exec(output);
    if (ready?.[1] && key?.[1]) {
      return {
        child,
        output: () => output,
        baseUrl: ready[1],
        apiKey: key[1],
        dynamoPort,
        dynamoEndpoint: `http://127.0.0.1:${dynamoPort}`,
        exited,
        stop,
        kill,
      };
    }
    if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) {
      kill();
      throw new Error(`npm start printed no ready line within ${readyTimeoutMs} ms:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
