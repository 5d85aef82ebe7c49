import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lambdaContext } from '../local/lambda/events';

const PROBE = join(import.meta.dirname, 'probe.mjs');

/** What `probe.mjs cold` reports: module init, then the first invocation. */
export interface ColdProbe {
  initMs: number;
  firstCallMs: number;
  statusCode?: number;
  /** Batch item failures a stream function reported. */
  failedItems?: number;
  error?: string;
}

/** What `probe.mjs invoke` reports. */
export interface InvokeProbe {
  initMs: number;
  maxRssInitKb: number;
  maxRssKb: number;
  heapUsedPeakKb: number;
  invocations: { ms: number; statusCode?: number; failedItems?: number; payloadBytes?: number; error?: string }[];
}

/** Options of one probe process. */
export interface ProbeOptions {
  /** Environment of the function (table names, endpoint); merged over this process's. */
  env?: Record<string, string>;
  events?: readonly unknown[];
  /** The function's memory size, as its context reports it. @default 256 */
  memoryMb?: number;
  /** V8's old-space limit (`--max-old-space-size`), to tell memory a function needs from garbage not yet collected. */
  heapLimitMb?: number;
}

/** Runs `bench/probe.mjs` in a fresh `node` (the one running this script) and returns its report. */
export function runProbe(mode: 'init', module: string, options?: ProbeOptions): Promise<{ initMs: number }>;
export function runProbe(mode: 'cold', module: string, options?: ProbeOptions): Promise<ColdProbe>;
export function runProbe(mode: 'invoke', module: string, options?: ProbeOptions): Promise<InvokeProbe>;
export function runProbe(
  mode: 'init' | 'cold' | 'invoke',
  module: string,
  options: ProbeOptions = {},
): Promise<unknown> {
  const context = lambdaContext({ functionName: 'bench', memoryMb: options.memoryMb ?? 256 });
  // In a file: a batch of stream records is larger than one environment variable may be (128 KiB on Linux).
  const eventsDir = mkdtempSync(join(tmpdir(), 'probe-events-'));
  const eventsFile = join(eventsDir, 'events.json');
  writeFileSync(eventsFile, JSON.stringify(options.events ?? []));
  return new Promise((resolveProbe, reject) => {
    const child = spawn(process.execPath, [PROBE, mode, module], {
      env: {
        ...process.env,
        ...options.env,
        // Only what a probe asks for: the stack sets no NODE_OPTIONS on the functions (infra/bundling.ts).
        NODE_OPTIONS: options.heapLimitMb === undefined ? '' : `--max-old-space-size=${options.heapLimitMb}`,
        PROBE_EVENTS_FILE: eventsFile,
        PROBE_CONTEXT: JSON.stringify(context),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2000);
    });
    child.on('error', (error) => {
      rmSync(eventsDir, { recursive: true, force: true });
      reject(error);
    });
    child.on('close', (code) => {
      rmSync(eventsDir, { recursive: true, force: true });
      const line = stdout.split('\n').find((l) => l.startsWith('PROBE_RESULT '));
      if (code !== 0 || !line) {
        reject(new Error(`probe ${mode} ${module} exited ${code}: ${stderr.trim() || stdout.slice(-500)}`));
        return;
      }
      resolveProbe(JSON.parse(line.slice('PROBE_RESULT '.length)));
    });
  });
}
