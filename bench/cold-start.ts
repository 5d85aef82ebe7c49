import { join } from 'node:path';
import type { DeployedBundle } from '../infra/synthesized-assets';
import { lambdaTraceHeader, startXRayDaemonStandIn, tracingEnvironment } from '../test/helpers/xray-daemon';
import { startDynamoDbTlsEndpoint } from './dynamodb-tls';
import { runProbe } from './probe-child';
import { alternate, median, ratio, round } from './stats';

/** The naive baseline handler (unbundled SDK, lib-dynamodb and middy from node_modules). */
export const NAIVE_HANDLER = join(import.meta.dirname, 'naive', 'handler.mjs');

/** A module to cold-start, with the event of its first call. */
export interface ColdStartSubject {
  name: string;
  file: string;
  event: unknown;
  bundleBytes?: number;
}

/** Cold-start figures of one function. */
export interface ColdStartFigure {
  handler: string;
  bundleBytes: number;
  initMsMedian: number;
  /** Module init plus the first call against DynamoDB Local. */
  coldPathMsMedian: number;
  /** initMsMedian / the naive handler's. */
  initRatio: number;
  /** coldPathMsMedian / the naive handler's. */
  coldPathRatio: number;
}

/** Cold-start figures of every function and of the naive handler. */
export interface ColdStartResult {
  runs: number;
  /** The functions ran with tracing on, as deployed (Powertools Tracer, X-Ray daemon stand-in); the naive has none. */
  tracing: boolean;
  /** Every process reached DynamoDB Local over HTTPS, as a deployed function reaches DynamoDB (bench/dynamodb-tls.ts). */
  dynamoOverTls: boolean;
  naiveInitMsMedian: number;
  naiveColdPathMsMedian: number;
  functions: ColdStartFigure[];
}

/** The deployed bundles as cold-start subjects, each with its first event; a bundle without one is an error. */
export function bundleSubjects(
  bundles: readonly DeployedBundle[],
  firstEvents: Readonly<Record<string, unknown>>,
): ColdStartSubject[] {
  return bundles.map((bundle) => {
    if (!(bundle.handler in firstEvents)) throw new Error(`no first event for the ${bundle.handler} function`);
    return {
      name: bundle.handler,
      file: bundle.file,
      event: firstEvents[bundle.handler],
      bundleBytes: bundle.bytes,
    };
  });
}

/**
 * The cold path of each subject and of the naive handler: module init, then its first call (against DynamoDB Local
 * for those that call it), in a fresh `node` process each time; the median of `runs` processes per module, taken
 * round-robin so that a busy moment of the machine hits every module alike. Init alone would flatter a client that
 * loads its HTTP stack on the first call, as the SDK does; the cold path is what the first caller waits for.
 * Each process gets the environment Lambda gives a function with active tracing (its own trace id, the X-Ray daemon
 * address, here a UDP stand-in), so the figure includes the tracer as deployed; a subject that sends no segment
 * document fails the run, since its figure would not be the deployed one. Every process, the naive handler's too,
 * reaches DynamoDB Local over HTTPS (bench/dynamodb-tls.ts), as a deployed function reaches DynamoDB: a first call
 * over plain HTTP would charge the bundles a module load no deployed function makes and no TLS handshake.
 */
export async function measureColdStarts(
  subjects: readonly ColdStartSubject[],
  naiveEvent: unknown,
  runs: number,
  env: Record<string, string>,
): Promise<ColdStartResult> {
  const init = new Map<string, number[]>();
  const cold = new Map<string, number[]>();
  const dynamoEndpoint = env.AWS_ENDPOINT_URL_DYNAMODB;
  if (dynamoEndpoint === undefined) throw new Error('the cold path needs AWS_ENDPOINT_URL_DYNAMODB (DynamoDB Local)');
  const tls = await startDynamoDbTlsEndpoint(dynamoEndpoint);
  const daemon = await startXRayDaemonStandIn().catch(async (error: unknown) => {
    await tls.close();
    throw error;
  });
  const probeEnv = { ...env, ...tls.clientEnvironment, AWS_ENDPOINT_URL_DYNAMODB: tls.url };
  const traces = new Map<string, string[]>();
  const measure = async (name: string, file: string, event: unknown) => {
    const trace = lambdaTraceHeader();
    traces.set(name, [...(traces.get(name) ?? []), trace.traceId]);
    const probe = await runProbe('cold', file, {
      env: { ...probeEnv, ...tracingEnvironment(daemon.address, trace.header) },
      events: [event],
    });
    if (
      probe.error !== undefined ||
      (probe.failedItems ?? 0) > 0 ||
      (probe.statusCode !== undefined && probe.statusCode >= 500 && probe.statusCode !== 501)
    )
      throw new Error(`${name} failed its first call: ${probe.error ?? probe.statusCode ?? 'batch item failures'}`);
    init.set(name, [...(init.get(name) ?? []), probe.initMs]);
    cold.set(name, [...(cold.get(name) ?? []), probe.initMs + probe.firstCallMs]);
  };
  try {
    await alternate(runs, [
      () => measure('naive', NAIVE_HANDLER, naiveEvent),
      ...subjects.map((subject) => () => measure(subject.name, subject.file, subject.event)),
    ]);
    // Datagrams of the last process may still be on their way.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const traced = new Set(daemon.documents.map((document) => document.trace_id));
    for (const subject of subjects) {
      const untraced = (traces.get(subject.name) ?? []).filter((traceId) => !traced.has(traceId)).length;
      if (untraced > 0) throw new Error(`${subject.name} sent no trace in ${untraced} of its cold starts`);
    }
  } finally {
    await daemon.close();
    await tls.close();
  }
  const naiveInit = median(init.get('naive') ?? []);
  const naiveCold = median(cold.get('naive') ?? []);
  return {
    runs,
    tracing: true,
    dynamoOverTls: true,
    naiveInitMsMedian: round(naiveInit),
    naiveColdPathMsMedian: round(naiveCold),
    functions: subjects.map((subject) => {
      const initMs = median(init.get(subject.name) ?? []);
      const coldMs = median(cold.get(subject.name) ?? []);
      return {
        handler: subject.name,
        bundleBytes: subject.bundleBytes ?? 0,
        initMsMedian: round(initMs),
        coldPathMsMedian: round(coldMs),
        initRatio: ratio(initMs, naiveInit),
        coldPathRatio: ratio(coldMs, naiveCold),
      };
    }),
  };
}
