import { statSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { esbuildOptions, handlerEntries } from '../infra/bundling';
import { runProbe } from './probe-child';
import { alternate, median, ratio, round } from './stats';

/** The naive baseline handler (unbundled SDK, lib-dynamodb and middy from node_modules). */
export const NAIVE_HANDLER = join(import.meta.dirname, 'naive', 'handler.mjs');

/** One function bundled as the stack bundles it. */
export interface Bundle {
  handler: string;
  file: string;
  bytes: number;
}

/** Bundles every deployed function with the stack's esbuild options into `outDir/<handler>/index.js`. */
export async function bundleFunctions(outDir: string): Promise<Bundle[]> {
  const bundles: Bundle[] = [];
  for (const { handler, entry } of handlerEntries()) {
    const file = join(outDir, handler, 'index.js');
    await build({ ...esbuildOptions(entry, file), logLevel: 'error' });
    bundles.push({ handler, file, bytes: statSync(file).size });
  }
  return bundles;
}

/** Cold-start figures of one function. */
export interface ColdStartFigure {
  handler: string;
  bundleBytes: number;
  initMsMedian: number;
  /** initMsMedian / the naive handler's. */
  initRatio: number;
}

/** Cold-start figures of every function and of the naive handler. */
export interface ColdStartResult {
  runs: number;
  naiveInitMsMedian: number;
  functions: ColdStartFigure[];
}

/**
 * Module init of each bundle and of the naive handler: the median of `runs` fresh `node` processes each, taken
 * round-robin so that a busy moment of the machine hits every module alike. Bundles load with
 * `--enable-source-maps`, as the stack configures them.
 */
export async function measureColdStarts(bundles: readonly Bundle[], runs: number): Promise<ColdStartResult> {
  const samples = new Map<string, number[]>();
  const record = (key: string, ms: number): void => {
    samples.set(key, [...(samples.get(key) ?? []), ms]);
  };
  await alternate(runs, [
    async () => record('naive', (await runProbe('init', NAIVE_HANDLER)).initMs),
    ...bundles.map(
      (bundle) => async () =>
        record(bundle.handler, (await runProbe('init', bundle.file, { sourceMaps: true })).initMs),
    ),
  ]);
  const naive = median(samples.get('naive') ?? []);
  return {
    runs,
    naiveInitMsMedian: round(naive),
    functions: bundles.map((bundle) => {
      const initMs = median(samples.get(bundle.handler) ?? []);
      return {
        handler: bundle.handler,
        bundleBytes: bundle.bytes,
        initMsMedian: round(initMs),
        initRatio: ratio(initMs, naive),
      };
    }),
  };
}
