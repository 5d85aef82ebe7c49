/**
 * The bench's results file and its tables: `npm run bench` prints them, and `npm run bench:doc` writes the same
 * tables into docs/performance.md from the results file it copies beside it, so the doc shows one run's figures.
 */
import type { ColdStartResult } from './cold-start';
import type { ListTimes, PatchResult } from './latency';
import type { ImportRateFigure, ReadUnitsFigure } from './read-units';
import { markdownTable, round } from './stats';

/**
 * The bundle of aws-samples' serverless-typescript-demo, a well-known reference, in bytes (623 KB): a bundle above
 * it is flagged in the report. Not a budget: sizes are reported, and the cold path is the target.
 */
export const REFERENCE_BUNDLE_BYTES = 623_000;

/** Peak memory of one function instance (a fresh process running its bundle), in MB. */
export interface MemoryFigure {
  function: string;
  scenario: string;
  maxRssMb: number;
  maxRssAfterInitMb: number;
  heapUsedPeakMb: number;
}

export interface ListFigure extends ListTimes {
  entries: number;
  handlerPeakRssMb: number;
  /**
   * The handler's peak RSS with V8's old space capped at {@link LIST_HEAP_CAP_MB}: what the list needs, rather than
   * what V8 lets garbage grow to before collecting it. Absent in results written before it was measured.
   */
  handlerPeakRssCappedMb?: number;
  naivePeakRssMb: number;
}

/** The old-space cap of the list's second memory probe (its heap peak at 1,000,000 entries is well below it). */
export const LIST_HEAP_CAP_MB = 128;

export interface Target {
  target: string;
  value: number;
  limit: number;
  met: boolean;
}

/** A figure that meets its target when it is at most `limit`. */
export function targetAtMost(target: string, value: number, limit: number): Target {
  return { target, value, limit, met: value <= limit };
}

/** Issue 20's PATCH ratios, as every report names them (npm run bench and npm run bench:stage). */
export const PATCH_RATIO_TARGETS = {
  adjust: { target: 'PATCH p50: adjustBy / plain PATCH', limit: 1.05 },
  idempotent: { target: 'PATCH p50: adjustBy with Idempotency-Key / plain PATCH', limit: 1.5 },
} as const;

/** The targets table: each target, its value, its limit and whether it is met. */
export function targetsTable(targets: readonly Target[]): string {
  return markdownTable(
    ['target', 'value', 'limit', 'met'],
    targets.map((t) => [t.target, t.value, t.limit, t.met ? 'yes' : 'NO']),
  );
}

/** What one run measured, as written to its results file. */
export interface BenchResults {
  meta: {
    profile: string;
    /** The command that ran, e.g. `npm run bench`. */
    command: string;
    node: string;
    cpus: number;
    cpuModel: string;
    /** The 1-minute load average when the run began and when it ended: the machine is shared. */
    loadAverage: [number, number];
    date: string;
    seconds: number;
  };
  coldStart: ColdStartResult;
  patch: PatchResult;
  list: ListFigure[];
  memory: MemoryFigure[];
  readUnits: ReadUnitsFigure[];
  /** Absent in results written before the list index. */
  importRate?: ImportRateFigure[];
  targets: Target[];
}

function kb(bytes: number): string {
  return `${round(bytes / 1000)} KB`;
}

/** Exact, as a bundle's size is compared across runs. */
function bytes(count: number): string {
  return `${count.toLocaleString('en-US')} B`;
}

/** The bundles above {@link REFERENCE_BUNDLE_BYTES}. */
export function bundlesAboveReference(results: BenchResults): { handler: string; bundleBytes: number }[] {
  return results.coldStart.functions.filter((f) => f.bundleBytes > REFERENCE_BUNDLE_BYTES);
}

/** Each table of a run (and the line naming the run), by the name of its marked section in docs/performance.md. */
export function renderSections(results: BenchResults): Record<string, string> {
  const { meta, coldStart, patch, list, memory, readUnits, importRate = [], targets } = results;
  const above = bundlesAboveReference(results);
  return {
    run:
      `Run of ${meta.date}: \`${meta.command}\` (profile ${meta.profile}, ${meta.seconds} s), ` +
      `Node ${meta.node}, ${meta.cpus} × ${meta.cpuModel}, 1-minute load average ${meta.loadAverage[0]} at the start ` +
      `and ${meta.loadAverage[1]} at the end.`,
    'cold-start': [
      `Median of ${coldStart.runs} fresh node processes; naive handler: init ${coldStart.naiveInitMsMedian} ms, cold path ${coldStart.naiveColdPathMsMedian} ms.` +
        (coldStart.dynamoOverTls ? ' DynamoDB Local reached over HTTPS, as DynamoDB is from a stage.' : ''),
      '',
      markdownTable(
        ['function', 'bundle', 'init ms', 'init vs naive', 'cold path ms', 'cold path vs naive'],
        coldStart.functions.map((f) => [
          f.handler,
          bytes(f.bundleBytes),
          f.initMsMedian,
          `${f.initRatio}x`,
          f.coldPathMsMedian,
          `${f.coldPathRatio}x`,
        ]),
      ),
      '',
      above.length === 0
        ? `No bundle is above ${kb(REFERENCE_BUNDLE_BYTES)} (the bundle of aws-samples' serverless-typescript-demo).`
        : `Above ${kb(REFERENCE_BUNDLE_BYTES)} (the bundle of aws-samples' serverless-typescript-demo): ${above
            .map((f) => `${f.handler} (${bytes(f.bundleBytes)})`)
            .join(', ')}.`,
    ].join('\n'),
    patch: [
      `${patch.iterations} of each, alternating.`,
      '',
      markdownTable(
        ['path', 'p50 ms', 'p99 ms'],
        [
          ['local gateway', patch.gatewayP50Ms, patch.gatewayP99Ms],
          ['local gateway, with expectedQuantity', patch.gatewayCasP50Ms, patch.gatewayCasP99Ms],
          ...adjustRows(patch, 'paths'),
          ['raw UpdateItem', patch.rawUpdateItemP50Ms, patch.rawUpdateItemP99Ms],
          ['gateway / raw', `${patch.ratioP50}x`, `${patch.ratioP99}x`],
          ['with / without expectedQuantity', `${patch.casRatioP50}x`, `${patch.casRatioP99}x`],
          ...adjustRows(patch, 'ratios'),
        ],
      ),
    ].join('\n'),
    list: markdownTable(
      [
        'entries',
        'handler first byte ms',
        'handler last byte ms',
        'naive ms',
        'handler/naive',
        'npm start first/last byte ms',
        'npm start gzip first/last byte ms',
        'identity',
        'gzip',
        'exact',
        'peak RSS handler',
        `peak RSS handler, heap capped at ${LIST_HEAP_CAP_MB} MB`,
        'peak RSS naive',
      ],
      list.map((l) => [
        l.entries,
        l.handlerTtfbMsMedian,
        l.handlerMsMedian,
        l.naiveMsMedian,
        `${l.handlerVsNaive}x`,
        `${l.gatewayTtfbMsMedian} / ${l.gatewayMsMedian}`,
        `${l.gatewayGzipTtfbMsMedian} / ${l.gatewayGzipMsMedian}`,
        kb(l.identityBytes),
        kb(l.gzipBytes),
        l.exact ? 'yes' : 'NO',
        `${l.handlerPeakRssMb} MB`,
        l.handlerPeakRssCappedMb === undefined ? '-' : `${l.handlerPeakRssCappedMb} MB`,
        `${l.naivePeakRssMb} MB`,
      ]),
    ),
    memory: markdownTable(
      ['function', 'scenario', 'max RSS', 'after init', 'heap peak'],
      memory.map((m) => [
        m.function,
        m.scenario,
        `${m.maxRssMb} MB`,
        `${m.maxRssAfterInitMb} MB`,
        `${m.heapUsedPeakMb} MB`,
      ]),
    ),
    'read-units': markdownTable(
      [
        'entries written by',
        'entries',
        'Query pages',
        'read units',
        'per 1,000,000 entries',
        "an instance's first Scan page",
      ],
      readUnits.map((r) => [r.writer, r.entries, r.pages, r.units, r.unitsPerMillionEntries, r.firstListScanUnits]),
    ),
    'import-rate': markdownTable(
      ['table', 'entries', 'seconds', 'rows/s'],
      importRate.map((r) => [r.table, r.entries, r.seconds, r.rowsPerSecond]),
    ),
    targets: targetsTable(targets),
  };
}

/** The whole report, as `npm run bench` prints it. */
export function renderReport(results: BenchResults): string {
  const s = renderSections(results);
  return [
    s.run,
    '',
    '## Cold start',
    s['cold-start'],
    '',
    '## PATCH /inventory/{petId}',
    s.patch,
    '',
    '## GET /inventory (medians; half the ids 19 digits; handler and naive in-process, npm start over HTTP)',
    s.list,
    '',
    '## Peak memory per function (fresh process, its bundle)',
    s.memory,
    '',
    "## Read units of the list (its index's Queries, and apart an instance's first Scan page, as DynamoDB Local reports them)",
    s['read-units'],
    '',
    '## Import into DynamoDB Local (the CLI writer, signed rows; best of two, alternating)',
    s['import-rate'],
    '',
    '## Targets',
    s.targets,
  ].join('\n');
}

const BEGIN = /<!-- bench:begin ([a-z-]+) -->\n[\s\S]*?<!-- bench:end -->/g;

/**
 * `doc` with every marked section (`<!-- bench:begin NAME -->` … `<!-- bench:end -->`) holding the section of that
 * name rendered from `results`. Throws on a marker with no such section, so a renamed table cannot go stale.
 */
export function fillMarkedSections(doc: string, results: BenchResults): string {
  const sections = renderSections(results);
  return doc.replace(BEGIN, (_whole, name: string) => {
    const section = sections[name];
    if (section === undefined) throw new Error(`docs: no bench section named "${name}"`);
    return `<!-- bench:begin ${name} -->\n${section}\n<!-- bench:end -->`;
  });
}

/** The adjustBy rows of the PATCH table; none for results recorded before the bench measured adjustments. */
function adjustRows(patch: PatchResult, part: 'paths' | 'ratios'): (string | number)[][] {
  if (patch.gatewayAdjustP50Ms === undefined) return [];
  return part === 'paths'
    ? [
        ['local gateway, adjustBy', patch.gatewayAdjustP50Ms, patch.gatewayAdjustP99Ms ?? '-'],
        [
          'local gateway, adjustBy + Idempotency-Key',
          patch.gatewayIdempotentP50Ms ?? '-',
          patch.gatewayIdempotentP99Ms ?? '-',
        ],
        ...(patch.utilityWritesP50Ms === undefined
          ? []
          : [["Idempotency utility's two writes alone (claim, store the answer)", patch.utilityWritesP50Ms, '-']]),
      ]
    : [
        ['adjustBy / plain', `${patch.adjustRatioP50}x`, '-'],
        ['adjustBy + Idempotency-Key / plain', `${patch.idempotentRatioP50}x`, '-'],
        ...(patch.idempotentFloorRatioP50 === undefined
          ? []
          : [
              [
                "(adjustBy + the utility's two writes) / plain: an estimate of the least Idempotency-Key costs on it",
                `${patch.idempotentFloorRatioP50}x`,
                '-',
              ],
            ]),
      ];
}
