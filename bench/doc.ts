/**
 * `npm run bench:doc [-- FILE]`: copies one run's results (default bench/results.json) to
 * docs/performance-results.json and rewrites docs/performance.md's tables from it. `-- --check`: exits 1 when
 * docs/performance.md's tables differ from what docs/performance-results.json renders.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BenchResults, fillMarkedSections } from './report';

const DOC = join(import.meta.dirname, '..', 'docs', 'performance.md');
const RESULTS = join(import.meta.dirname, '..', 'docs', 'performance-results.json');
const [argument] = process.argv.slice(2);
const source = argument === '--check' ? RESULTS : (argument ?? join(import.meta.dirname, 'results.json'));
const text = readFileSync(source, 'utf8');
const results = JSON.parse(text) as BenchResults;
const doc = readFileSync(DOC, 'utf8');
if (results.meta.profile === 'smoke') throw new Error(`${source} is a --smoke run: its figures are not figures`);
if (argument === '--check') {
  if (fillMarkedSections(doc, results) !== doc) {
    process.stderr.write('docs/performance.md: its tables differ from docs/performance-results.json\n');
    process.exitCode = 1;
  }
} else {
  writeFileSync(DOC, fillMarkedSections(doc, results));
  if (source !== RESULTS) writeFileSync(RESULTS, text);
  process.stdout.write(`docs/performance.md: tables from ${source} (run of ${results.meta.date})\n`);
}
