import { join } from 'node:path';
import type { DeployedBundle } from '../infra/synthesized-assets';
import { lambdaTraceHeader, startXRayDaemonStandIn, tracingEnvironment } from '../test/helpers/xray-daemon';
import { startDynamoDbTlsEndpoint } from './dynamodb-tls';
import { functionCalls } from './events';
import { probeFailure, runProbe } from './probe-child';
import { alternate, columnsTable, median, ratio, round, type Target, targetAtMost } from './stats';

/** The naive baseline handler (unbundled SDK, lib-dynamodb and middy from node_modules). */
export const NAIVE_HANDLER = join(import.meta.dirname, 'naive', 'handler.mjs');

/**
 * The bundle of aws-samples' serverless-typescript-demo, a well-known reference, in bytes (623 KB): a bundle above
 * it is flagged in the report. Not a budget: sizes are reported, and the cold path is the target.
 */
const REFERENCE_BUNDLE_BYTES = 623_000;

/** Cold-start figures of one function. */
export interface ColdStartFigure {
  handler: string;
  bundleBytes: number;
  initMsMedian: number;
  /** Module init plus the first call against DynamoDB Local. */
  coldPathMsMedian: number;
}

/** Cold-start figures of every function and of the naive handler. */
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
  const first = (handler: string) => {
    const call = calls[handler];
    if (!call) throw new Error(`no first call for the ${handler} function`);
    return call.first;
  };
  const subjects = [
    { name: 'naive', file: NAIVE_HANDLER, event: first('list-inventory') },
    ...bundles.map((bundle) => ({ name: bundle.handler, file: bundle.file, event: first(bundle.handler) })),
  ];
  const runs = new Map(
    subjects.map((s) => [s.name, { init: [] as number[], cold: [] as number[], traces: [] as string[] }]),
  );
  const tls = await startDynamoDbTlsEndpoint(options.dynamoEndpoint);
  const daemon = await startXRayDaemonStandIn().catch(async (error: unknown) => {
    await tls.close();
    throw error;
  });
  const probeEnv = { ...options.env, ...tls.clientEnvironment, AWS_ENDPOINT_URL_DYNAMODB: tls.url };
  const measure = (name: string, file: string, event: unknown) => async () => {
    const trace = lambdaTraceHeader();
    const samples = runs.get(name);
    samples?.traces.push(trace.traceId);
    const env = { ...probeEnv, ...tracingEnvironment(daemon.address, trace.header) };
    const probe = await runProbe('cold', file, { env, events: [event] });
    const failure = probeFailure(probe);
    if (failure) throw new Error(`${name} failed its first call: ${failure}`);
    samples?.init.push(probe.initMs);
    samples?.cold.push(probe.initMs + probe.firstCallMs);
  };
  try {
    await alternate(
      options.runs,
      subjects.map((s) => measure(s.name, s.file, s.event)),
    );
    // Datagrams of the last process may still be on their way.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const traced = new Set(daemon.documents.map((document) => document.trace_id));
    for (const bundle of bundles) {
      const untraced = (runs.get(bundle.handler)?.traces ?? []).filter((traceId) => !traced.has(traceId)).length;
      if (untraced > 0) throw new Error(`${bundle.handler} sent no trace in ${untraced} of its cold starts`);
    }
  } finally {
    await daemon.close();
    await tls.close();
  }
  const at = (name: string, phase: 'init' | 'cold') => round(median(runs.get(name)?.[phase] ?? []));
  return {
    runs: options.runs,
    naiveInitMsMedian: at('naive', 'init'),
    naiveColdPathMsMedian: at('naive', 'cold'),
    functions: bundles.map((bundle) => ({
      handler: bundle.handler,
      bundleBytes: bundle.bytes,
      initMsMedian: at(bundle.handler, 'init'),
      coldPathMsMedian: at(bundle.handler, 'cold'),
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
      targetAtMost(
        `cold path ${f.handler}: bundle / naive`,
        ratio(f.coldPathMsMedian, coldStart.naiveColdPathMsMedian),
        0.9,
      ),
    );
}
