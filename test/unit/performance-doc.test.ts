import { runProcess } from '../helpers/process';

describe('docs/performance.md: its figure tables come from one bench run', () => {
  it('holds, in every marked section, exactly what npm run bench:doc renders from docs/performance-results.json', async () => {
    // The script `npm run bench:doc -- --check` runs, without npm's and tsx's wrapper processes.
    const run = await runProcess(process.execPath, ['--import', 'tsx', 'bench/doc.ts', '--check']);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  });
});
