/**
 * `npm run bench:doc [-- FILE]`: copies one run's results (default bench/results.json) to
 * docs/performance-results.json and rewrites docs/performance.md's tables from it. `-- --check`: exits 1 when
 * docs/performance.md's tables differ from what docs/performance-results.json renders.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BenchResults, commandLine, renderSections } from './report';

const DOC = join(import.meta.dirname, '..', 'docs', 'performance.md');
const RESULTS = join(import.meta.dirname, '..', 'docs', 'performance-results.json');
const { values, positionals } = commandLine('usage: npm run bench:doc [-- FILE | --check]', {
  options: { check: { type: 'boolean', default: false } },
  allowPositionals: true,
});
const source = values.check ? RESULTS : (positionals[0] ?? join(import.meta.dirname, 'results.json'));
const text = readFileSync(source, 'utf8');
const results = JSON.parse(text) as BenchResults;
if (results.meta.profile === 'smoke') throw new Error(`${source} is a --smoke run: its figures are not figures`);
const doc = readFileSync(DOC, 'utf8');
const sections = renderSections(results);
const marked = [...doc.matchAll(/<!-- bench:begin ([a-z-]+) -->/g)].map((m) => m[1]);
if (marked.sort().join() !== Object.keys(sections).sort().join())
  throw new Error(`docs/performance.md marks ${marked}, the report has ${Object.keys(sections)}`);
const filled = doc.replace(
  /<!-- bench:begin ([a-z-]+) -->\n[\s\S]*?<!-- bench:end -->/g,
  (_whole, name: string) => `<!-- bench:begin ${name} -->\n${sections[name]}\n<!-- bench:end -->`,
);
if (values.check && filled !== doc) {
  process.stderr.write('docs/performance.md: its tables differ from docs/performance-results.json\n');
  process.exitCode = 1;
} else if (!values.check) {
  writeFileSync(DOC, filled);
  if (source !== RESULTS) writeFileSync(RESULTS, text);
  process.stdout.write(`docs/performance.md: tables from ${source} (run of ${results.meta.date})\n`);
}
