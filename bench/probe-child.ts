import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { lambdaContext } from '../local/lambda/events';

const PROBE = join(import.meta.dirname, 'probe.mjs');

/** The outcome of one invocation in a probe: a status, a stream function's batch item failures, or an error. */
export interface ProbeOutcome {
  statusCode?: number;
  failedItems?: number;
  error?: string;
}

/** What `probe.mjs cold` reports: module init, then the first invocation. */
export interface ColdProbe extends ProbeOutcome {
  initMs: number;
  firstCallMs: number;
}

/** What `probe.mjs invoke` reports. */
export interface InvokeProbe {
  maxRssInitKb: number;
  maxRssKb: number;
  heapUsedPeakKb: number;
  invocations: ProbeOutcome[];
}

/** Why an invocation failed, or undefined. 501 is the designed answer of the two unimplemented routes. */
export function probeFailure(outcome: ProbeOutcome): string | undefined {
  if (outcome.error !== undefined) return outcome.error;
  if ((outcome.failedItems ?? 0) > 0) return `${outcome.failedItems} batch item failures`;
  const status = outcome.statusCode ?? 200;
  return status >= 500 && status !== 501 ? `status ${status}` : undefined;
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
export function runProbe(mode: 'cold', module: string, options?: ProbeOptions): Promise<ColdProbe>;
export function runProbe(mode: 'invoke', module: string, options?: ProbeOptions): Promise<InvokeProbe>;
export async function runProbe(mode: 'cold' | 'invoke', module: string, options: ProbeOptions = {}): Promise<unknown> {
  const context = lambdaContext({ functionName: 'bench', memoryMb: options.memoryMb ?? 256 });
  // In a file: a batch of stream records is larger than one environment variable may be (128 KiB on Linux).
  const eventsDir = mkdtempSync(join(tmpdir(), 'probe-events-'));
  const eventsFile = join(eventsDir, 'events.json');
  writeFileSync(eventsFile, JSON.stringify(options.events ?? []));
  const env = {
    ...process.env,
    ...options.env,
    // Only what a probe asks for: the stack sets no NODE_OPTIONS on the functions (infra/bundling.ts).
    NODE_OPTIONS: options.heapLimitMb === undefined ? '' : `--max-old-space-size=${options.heapLimitMb}`,
    PROBE_EVENTS_FILE: eventsFile,
    PROBE_CONTEXT: JSON.stringify(context),
  };
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [PROBE, mode, module], { env, maxBuffer: 1 << 24 });
    const line = stdout.split('\n').find((l) => l.startsWith('PROBE_RESULT '));
    if (!line) throw new Error(`probe ${mode} ${module} reported nothing: ${stdout.slice(-500)}`);
    return JSON.parse(line.slice('PROBE_RESULT '.length));
  } finally {
    rmSync(eventsDir, { recursive: true, force: true });
  }
}
