import { mkdtempSync, writeFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mapBundlePositions } from '../../cli/commands/stack';
import { run } from '../../cli/run';
import { aCapturedIo } from '../fixtures/cli/capture-io';

/**
 * A two-line bundle's map (Source Map v3, https://tc39.es/ecma426/): line 1 column 1 comes from the source's line 1
 * column 1 and line 1 column 10 from its line 1 column 10 (`AAAA,SAAS`); line 2 column 1 from its line 2 column 1
 * (`AACT`: one line on, nine columns back, as original columns carry over between lines).
 * The source path is as esbuild writes it from a temporary asset folder.
 */
const MAP = {
  version: 3,
  file: 'index.js',
  sourceRoot: '',
  sources: ['../../../tmp/petstore-bundles-x/work/functions/store/inventory-table.ts'],
  sourcesContent: [],
  names: [],
  mappings: 'AAAA,SAAS;AACT',
};

describe('CLI: stack map (a logged stack, mapped from the bundle to the TypeScript)', () => {
  it('replaces each bundle position with the source position the map names, repository-relative', () => {
    const stack =
      'Error: boom\n    at mu.setQuantity (/var/task/index.js:1:10)\n    at async p (/var/task/index.js:2:1)';
    expect(mapBundlePositions(stack, new SourceMap(MAP))).toBe(
      'Error: boom\n    at mu.setQuantity (functions/store/inventory-table.ts:1:10)\n' +
        '    at async p (functions/store/inventory-table.ts:2:1)',
    );
  });

  it('maps positions inside a JSON log line (escaped newlines) and leaves what the map does not cover as it is', () => {
    const line = JSON.stringify({ stack: 'E\n    at a (/var/task/index.js:1:10)\n    at b (/var/task/index.js:9:1)' });
    const mapped = mapBundlePositions(line, new SourceMap(MAP));
    expect(mapped).toContain('at a (functions/store/inventory-table.ts:1:10)');
    expect(mapped).toContain('at b (/var/task/index.js:9:1)');
    expect(mapped).not.toContain('/var/task/index.js:1:10');
  });

  it('prints the mapped log through `npm run cli -- stack map MAPFILE LOGFILE`, reading both relative to the cwd', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stack-map-'));
    writeFileSync(join(dir, 'index.js.map'), JSON.stringify(MAP));
    writeFileSync(join(dir, 'error.log'), 'at x (/var/task/index.js:1:10)\n');
    const io = aCapturedIo({ cwd: dir });
    const code = await run(['stack', 'map', 'index.js.map', 'error.log'], io);
    expect({ code, stdout: io.stdout.text, stderr: io.stderr.text }).toEqual({
      code: 0,
      stdout: 'at x (functions/store/inventory-table.ts:1:10)\n',
      stderr: '',
    });
  });

  it.each([
    [['stack', 'map', 'missing.map', 'error.log'], 1, /Cannot read the source map missing\.map: ENOENT/],
    [['stack', 'map', 'error.log', 'error.log'], 1, /error\.log is not a source map \(not JSON\)/],
    [['stack', 'map', 'other.json', 'error.log'], 1, /other\.json is not a source map \(no mappings\)/],
    [['stack', 'map', 'index.js.map'], 2, /stack map needs MAPFILE LOGFILE/],
  ])('refuses %j with exit code %i and one line naming the problem', async (argv, exit, message) => {
    const dir = mkdtempSync(join(tmpdir(), 'stack-map-'));
    writeFileSync(join(dir, 'index.js.map'), JSON.stringify(MAP));
    writeFileSync(join(dir, 'other.json'), '{"version":3}');
    writeFileSync(join(dir, 'error.log'), 'at x (/var/task/index.js:1:10)\n');
    const io = aCapturedIo({ cwd: dir });
    const code = await run(argv, io);
    expect({ code, stdout: io.stdout.text }).toEqual({ code: exit, stdout: '' });
    expect(io.stderr.text).toMatch(message);
    expect(io.stderr.text.trim().split('\n')).toHaveLength(1);
  });
});
