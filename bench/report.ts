/** The results file and the report, which `npm run bench` prints and `npm run bench:doc` writes into the docs. */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { renderSection, type Section } from './measure';

/** What one run measured, as written to its results file: each section by its name in docs/performance.md. */
export interface BenchResults {
  meta: {
    profile: string;
    command: string;
    node: string;
    cpus: number;
    cpuModel: string;
    /** The 1-minute load average when the run began and when it ended: the machine is shared. */
    loadAverage: [number, number];
    date: string;
    seconds: number;
  };
  sections: Record<string, Section>;
}

/** Each section's name and heading, in the report's order; the run line comes first and the targets last. */
const HEADINGS: Record<string, string> = {
  'cold-start': 'Cold start',
  patch: 'PATCH /inventory/{petId}',
  batch: 'POST /inventory/changes against sequential PATCHes',
  list: 'GET /inventory (half the ids 19 digits)',
  memory: 'Peak memory per function (fresh process, its bundle)',
  'read-units': 'Read units of a whole list',
  'import-rate': 'Import into DynamoDB Local (the CLI writer, signed rows)',
  feed: 'The change feed through npm start',
};

/** Every section as Markdown, by name, with the run line and the targets of every section with their verdicts. */
export function renderSections({ meta, sections }: BenchResults): Record<string, string> {
  const run =
    `Run of ${meta.date}: \`${meta.command}\` (profile ${meta.profile}, ${meta.seconds} s),\n` +
    `Node ${meta.node}, ${meta.cpus} × ${meta.cpuModel}, 1-minute load average ${meta.loadAverage[0]} at the start ` +
    `and ${meta.loadAverage[1]} at the end.`;
  const targets = Object.values(sections).flatMap((section) => section.targets ?? []);
  const rows = targets.map((t) => [t.target, t.value, t.limit, t.met ? 'yes' : 'NO']);
  const rendered = Object.keys(HEADINGS).map((name) => {
    const section = sections[name] ?? { note: 'Not measured in this run.' };
    return [name, renderSection(section)];
  });
  const verdicts = renderSection({ columns: ['target', 'value', 'limit', 'met'], rows });
  return { run, ...Object.fromEntries(rendered), targets: verdicts };
}

/** The whole report, as `npm run bench` prints it. */
export const renderReport = (results: BenchResults) =>
  Object.entries(renderSections(results))
    .map(([name, text]) => (name === 'run' ? text : `## ${HEADINGS[name] ?? 'Targets'}\n${text}`))
    .join('\n\n');

/** The command line as `parseArgs` reads it; an unknown or malformed flag ends the process with `usage`. */
export function commandLine<T extends ParseArgsConfig>(usage: string, config: T) {
  try {
    return parseArgs(config);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${usage}\n`);
    process.exit(2);
  }
}
