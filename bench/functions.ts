/** Each deployed function in fresh processes, as a Lambda instance runs it: its cold path, and its peak memory. */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { DeployedBundle } from '../infra/synthesized-assets';
import { lambdaContext } from '../local/lambda/events';
import { lambdaTraceHeader, startXRayDaemonStandIn, tracingEnvironment } from '../test/helpers/xray-daemon';
import { startDynamoDbTlsEndpoint } from './dynamodb-tls';
import { functionCalls } from './events';
import { alternate, columnsTable, median, ratio, round, type Target, target } from './stats';

/** The naive baseline handler (unbundled SDK, lib-dynamodb and middy from node_modules). */
export const NAIVE_HANDLER = join(import.meta.dirname, 'naive', 'handler.mjs');

const PROBE = join(import.meta.dirname, 'probe.mjs');

/**
 * The bundle of aws-samples' serverless-typescript-demo, a well-known reference, in bytes (623 KB): a bundle above
 * it is flagged in the report. Not a budget: sizes are reported, and the cold path is the target.
 */
const REFERENCE_BUNDLE_BYTES = 623_000;

/** The outcome of one invocation in a probe: a status, a stream function's batch item failures, or an error. */
interface ProbeOutcome {
  statusCode?: number;
  failedItems?: number;
  error?: string;
}

/** What `bench/probe.mjs` reports in each mode: module init and the first call, or peak memory over every call. */
interface ProbeReports {
  cold: ProbeOutcome & { initMs: number; firstCallMs: number };
  invoke: { maxRssInitKb: number; maxRssKb: number; heapUsedPeakKb: number; invocations: ProbeOutcome[] };
}

/** One probe process: the function's environment (merged over this process's), its events, its limits. */
interface ProbeOptions {
  env: Record<string, string>;
  events: readonly unknown[];
  /** The function's memory size, as its context reports it. @default 256 */
  memoryMb?: number;
  /** V8's old-space limit (`--max-old-space-size`), to tell memory a function needs from garbage not yet collected. */
  heapLimitMb?: number;
}

/** Runs `bench/probe.mjs` in a fresh `node` (the one running this script) and returns its report. */
async function runProbe<M extends keyof ProbeReports>(
  mode: M,
  module: string,
  options: ProbeOptions,
): Promise<ProbeReports[M]> {
  const context = lambdaContext({ functionName: 'bench', memoryMb: options.memoryMb ?? 256 });
  // In a file: a batch of stream records is larger than one environment variable may be (128 KiB on Linux).
  const eventsDir = mkdtempSync(join(tmpdir(), 'probe-events-'));
  const eventsFile = join(eventsDir, 'events.json');
  writeFileSync(eventsFile, JSON.stringify(options.events));
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

/** Why an invocation failed, or undefined. 501 is the designed answer of the two unimplemented routes. */
function probeFailure(outcome: ProbeOutcome): string | undefined {
  if (outcome.error !== undefined) return outcome.error;
  if ((outcome.failedItems ?? 0) > 0) return `${outcome.failedItems} batch item failures`;
  const status = outcome.statusCode ?? 200;
  return status >= 500 && status !== 501 ? `status ${status}` : undefined;
}

/** Cold-start figures of one function: module init, and init plus the first call against DynamoDB Local. */
export interface ColdStartFigure {
  handler: string;
  bundleBytes: number;
  initMsMedian: number;
  coldPathMsMedian: number;
}

export interface ColdStartResult {
  runs: number;
  naiveInitMsMedian: number;
  naiveColdPathMsMedian: number;
  functions: ColdStartFigure[];
}

/**
 * Init plus first call of each bundle and the naive handler, a fresh `node` per run, alternating: what the first
 * caller waits for. Each run is traced (a bundle that sends no segment fails) and reaches DynamoDB over HTTPS.
 */
export async function measureColdStarts(
  bundles: readonly DeployedBundle[],
  options: { runs: number; env: Record<string, string>; dynamoEndpoint: string; apiKey: string },
): Promise<ColdStartResult> {
  const calls = functionCalls(options.apiKey);
  const subjects = [{ handler: 'naive', file: NAIVE_HANDLER }, ...bundles];
  const runs = new Map(subjects.map((s) => [s.handler, { init: [] as number[], cold: [] as number[] }]));
  /** The trace of each bundle's run, by trace id: the naive handler sends none. */
  const traces = new Map<string, string>();
  const tls = await startDynamoDbTlsEndpoint(options.dynamoEndpoint);
  const daemon = await startXRayDaemonStandIn().catch(async (error: unknown) => {
    await tls.close();
    throw error;
  });
  const probeEnv = { ...options.env, ...tls.clientEnvironment, AWS_ENDPOINT_URL_DYNAMODB: tls.url };
  const measure = (handler: string, file: string) => async () => {
    const trace = lambdaTraceHeader();
    if (handler !== 'naive') traces.set(trace.traceId, handler);
    const env = { ...probeEnv, ...tracingEnvironment(daemon.address, trace.header) };
    const event = handler === 'naive' ? calls['list-inventory']?.first : calls[handler]?.first;
    if (event === undefined) throw new Error(`no first call for the ${handler} function`);
    const probe = await runProbe('cold', file, { env, events: [event] });
    const failure = probeFailure(probe);
    if (failure) throw new Error(`${handler} failed its first call: ${failure}`);
    runs.get(handler)?.init.push(probe.initMs);
    runs.get(handler)?.cold.push(probe.initMs + probe.firstCallMs);
  };
  try {
    await alternate(
      options.runs,
      subjects.map((s) => measure(s.handler, s.file)),
    );
    // Datagrams of the last process may still be on their way.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const traced = new Set(daemon.documents.map((document) => document.trace_id));
    const untraced = [...traces].filter(([traceId]) => !traced.has(traceId)).map(([, handler]) => handler);
    if (untraced.length > 0) throw new Error(`no trace in a cold start of ${[...new Set(untraced)].join(', ')}`);
  } finally {
    await daemon.close();
    await tls.close();
  }
  const at = (handler: string, phase: 'init' | 'cold') => round(median(runs.get(handler)?.[phase] ?? []));
  return {
    runs: options.runs,
    naiveInitMsMedian: at('naive', 'init'),
    naiveColdPathMsMedian: at('naive', 'cold'),
    functions: bundles.map(({ handler, bytes }) => ({
      handler,
      bundleBytes: bytes,
      initMsMedian: at(handler, 'init'),
      coldPathMsMedian: at(handler, 'cold'),
    })),
  };
}

export function coldStartTable(coldStart: ColdStartResult): string {
  const above = coldStart.functions.filter((f) => f.bundleBytes > REFERENCE_BUNDLE_BYTES);
  const bytes = (count: number) => `${count.toLocaleString('en-US')} B`;
  const reference = `${REFERENCE_BUNDLE_BYTES / 1000} KB (the bundle of aws-samples' serverless-typescript-demo)`;
  return [
    `Median of ${coldStart.runs} fresh node processes; naive handler: init ${coldStart.naiveInitMsMedian} ms, ` +
      `cold path ${coldStart.naiveColdPathMsMedian} ms.`,
    '',
    columnsTable(coldStart.functions, [
      ['function', (f) => f.handler],
      ['bundle', (f) => bytes(f.bundleBytes)],
      ['init ms', (f) => f.initMsMedian],
      ['init vs naive', (f) => `${ratio(f.initMsMedian, coldStart.naiveInitMsMedian)}x`],
      ['cold path ms', (f) => f.coldPathMsMedian],
      ['cold path vs naive', (f) => `${ratio(f.coldPathMsMedian, coldStart.naiveColdPathMsMedian)}x`],
    ]),
    '',
    above.length === 0
      ? `No bundle is above ${reference}.`
      : `Above ${reference}: ${above.map((f) => `${f.handler} (${bytes(f.bundleBytes)})`).join(', ')}.`,
  ].join('\n');
}

/** The cold path of every function a client waits on (not the deploy's self-check), against the naive handler's. */
export function coldStartTargets(coldStart: ColdStartResult): Target[] {
  return coldStart.functions
    .filter((f) => f.handler !== 'self-check')
    .map((f) =>
      target(`cold path ${f.handler}: bundle / naive`, ratio(f.coldPathMsMedian, coldStart.naiveColdPathMsMedian), 0.9),
    );
}

/** Peak memory of one function instance (a fresh process running its bundle), in MB. */
export interface MemoryFigure {
  function: string;
  scenario: string;
  maxRssMb: number;
  maxRssAfterInitMb: number;
  heapUsedPeakMb: number;
}

/** `file`'s peak memory over `options.events` in a fresh process; throws when an invocation failed. */
export async function probeMemory(
  fn: string,
  scenario: string,
  file: string,
  options: ProbeOptions,
): Promise<MemoryFigure> {
  const probe = await runProbe('invoke', file, options);
  const failure = probe.invocations.map(probeFailure).find((message) => message !== undefined);
  if (failure) throw new Error(`${fn} (${scenario}) failed in its probe: ${failure}`);
  const mb = (kb: number) => round(kb / 1024);
  return {
    function: fn,
    scenario,
    maxRssMb: mb(probe.maxRssKb),
    maxRssAfterInitMb: mb(probe.maxRssInitKb),
    heapUsedPeakMb: mb(probe.heapUsedPeakKb),
  };
}

/** Each function's peak memory but the list's (measured at each list size), over its calls in `bench/events.ts`. */
export async function measureFunctionMemory(
  bundles: readonly DeployedBundle[],
  env: Record<string, string>,
  apiKey: string,
): Promise<MemoryFigure[]> {
  const calls = functionCalls(apiKey);
  const figures: MemoryFigure[] = [];
  for (const { handler, file } of bundles.filter((b) => b.handler !== 'list-inventory')) {
    const plan = calls[handler];
    if (!plan) throw new Error(`no memory scenario for ${handler}`);
    figures.push(await probeMemory(handler, plan.scenario, file, { env, events: plan.events }));
  }
  return figures;
}

export function memoryTable(memory: readonly MemoryFigure[]): string {
  return columnsTable(memory, [
    ['function', (m) => m.function],
    ['scenario', (m) => m.scenario],
    ['max RSS', (m) => `${m.maxRssMb} MB`],
    ['after init', (m) => `${m.maxRssAfterInitMb} MB`],
    ['heap peak', (m) => `${m.heapUsedPeakMb} MB`],
  ]);
}
