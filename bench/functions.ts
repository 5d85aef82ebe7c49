/** Each deployed function in fresh processes, as a Lambda instance runs it: its cold path, and its peak memory. */
import { join } from 'node:path';
import type { DeployedBundle } from '../infra/synthesized-assets';
import { lambdaTraceHeader, startXRayDaemonStandIn, tracingEnvironment } from '../test/helpers/xray-daemon';
import { startDynamoDbTlsEndpoint } from './dynamodb-tls';
import { functionCalls } from './events';
import { type ProbeOptions, probeFailure, runProbe } from './probe-child';
import { alternate, columnsTable, median, ratio, round, type Target, target } from './stats';

/** The naive baseline handler (unbundled SDK, lib-dynamodb and middy from node_modules). */
export const NAIVE_HANDLER = join(import.meta.dirname, 'naive', 'handler.mjs');

/**
 * The bundle of aws-samples' serverless-typescript-demo, a well-known reference, in bytes (623 KB): a bundle above
 * it is flagged in the report. Not a budget: sizes are reported, and the cold path is the target.
 */
const REFERENCE_BUNDLE_BYTES = 623_000;

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
  const runs = new Map(
    subjects.map((s) => [s.handler, { init: [] as number[], cold: [] as number[], traces: [] as string[] }]),
  );
  const tls = await startDynamoDbTlsEndpoint(options.dynamoEndpoint);
  const daemon = await startXRayDaemonStandIn().catch(async (error: unknown) => {
    await tls.close();
    throw error;
  });
  const probeEnv = { ...options.env, ...tls.clientEnvironment, AWS_ENDPOINT_URL_DYNAMODB: tls.url };
  const measure = (handler: string, file: string) => async () => {
    const trace = lambdaTraceHeader();
    const samples = runs.get(handler);
    samples?.traces.push(trace.traceId);
    const env = { ...probeEnv, ...tracingEnvironment(daemon.address, trace.header) };
    const event = handler === 'naive' ? calls['list-inventory']?.first : calls[handler]?.first;
    if (event === undefined) throw new Error(`no first call for the ${handler} function`);
    const probe = await runProbe('cold', file, { env, events: [event] });
    const failure = probeFailure(probe);
    if (failure) throw new Error(`${handler} failed its first call: ${failure}`);
    samples?.init.push(probe.initMs);
    samples?.cold.push(probe.initMs + probe.firstCallMs);
  };
  try {
    await alternate(
      options.runs,
      subjects.map((s) => measure(s.handler, s.file)),
    );
    // Datagrams of the last process may still be on their way.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const traced = new Set(daemon.documents.map((document) => document.trace_id));
    for (const { handler } of bundles) {
      const untraced = (runs.get(handler)?.traces ?? []).filter((traceId) => !traced.has(traceId)).length;
      if (untraced > 0) throw new Error(`${handler} sent no trace in ${untraced} of its cold starts`);
    }
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
