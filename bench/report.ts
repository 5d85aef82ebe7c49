/** The results file and its tables, which `npm run bench` prints and `npm run bench:doc` writes into the docs. */
import { type ColdStartResult, coldStartTable, coldStartTargets, type MemoryFigure, memoryTable } from './functions';
import { type ListFigure, listTable, listTargets } from './list';
import { BATCH_RATIOS, BATCH_SCENARIOS, patchTable, patchTargets, type ScenarioResult } from './patch';
import { type ImportRateFigure, importRateLine, type ReadUnitsFigure, readTargets, readUnitsTable } from './read-units';
import { type Target, targetsTable } from './stats';

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
  patch: ScenarioResult;
  /** The batch against sequential PATCHes. */
  batch: ScenarioResult;
  list: ListFigure[];
  memory: MemoryFigure[];
  readUnits: ReadUnitsFigure[];
  importRate: ImportRateFigure;
}

/** Every target of a run, with its verdict. */
export function benchTargets(results: BenchResults): Target[] {
  return [
    ...listTargets(results.list),
    ...patchTargets(results.patch),
    ...patchTargets(results.batch, BATCH_RATIOS),
    ...coldStartTargets(results.coldStart),
    ...readTargets(results.readUnits, results.importRate),
  ];
}

/** Each section of the report: its name (its marker in docs/performance.md), its heading as printed, its text. */
const SECTIONS: [string, string, (results: BenchResults) => string][] = [
  ['run', '', ({ meta }) => runLine(meta)],
  ['cold-start', 'Cold start', (r) => coldStartTable(r.coldStart)],
  ['patch', 'PATCH /inventory/{petId}', (r) => patchTable(r.patch)],
  [
    'batch',
    'POST /inventory/changes against sequential PATCHes',
    (r) => patchTable(r.batch, BATCH_SCENARIOS, BATCH_RATIOS),
  ],
  ['list', 'GET /inventory (medians; half the ids 19 digits)', (r) => listTable(r.list)],
  ['memory', 'Peak memory per function (fresh process, its bundle)', (r) => memoryTable(r.memory)],
  ['read-units', 'Read units of a whole list', (r) => readUnitsTable(r.readUnits)],
  ['import-rate', 'Import into DynamoDB Local (the CLI writer, signed rows)', (r) => importRateLine(r.importRate)],
  ['targets', 'Targets', (r) => targetsTable(benchTargets(r))],
];

function runLine(meta: BenchResults['meta']): string {
  return (
    `Run of ${meta.date}: \`${meta.command}\` (profile ${meta.profile}, ${meta.seconds} s),\n` +
    `Node ${meta.node}, ${meta.cpus} × ${meta.cpuModel}, 1-minute load average ${meta.loadAverage[0]} at the start ` +
    `and ${meta.loadAverage[1]} at the end.`
  );
}

/** Each section of a run, by the name of its marked section in docs/performance.md. */
export function renderSections(results: BenchResults): Record<string, string> {
  return Object.fromEntries(SECTIONS.map(([name, , render]) => [name, render(results)]));
}

/** The whole report, as `npm run bench` prints it. */
export function renderReport(results: BenchResults): string {
  return SECTIONS.map(([, heading, render]) => (heading ? `## ${heading}\n${render(results)}` : render(results))).join(
    '\n\n',
  );
}

const MARKED = /<!-- bench:begin ([a-z-]+) -->\n[\s\S]*?<!-- bench:end -->/g;

/** `doc` with each `<!-- bench:begin NAME -->` section rendered anew; an unknown NAME throws rather than go stale. */
export function fillMarkedSections(doc: string, results: BenchResults): string {
  const sections = renderSections(results);
  return doc.replace(MARKED, (_whole, name: string) => {
    const section = sections[name];
    if (section === undefined) throw new Error(`docs: no bench section named "${name}"`);
    return `<!-- bench:begin ${name} -->\n${section}\n<!-- bench:end -->`;
  });
}
