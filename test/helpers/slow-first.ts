import Sequencer from '@jest/test-sequencer';

type Test = Parameters<Sequencer['sort']>[0][number];

/** The files that take longest (a synth with bundling, `npm start` with its DynamoDB Local, the validation engine). */
const SLOW = ['bundled-functions', 'npm-start-changes', 'e2e-npm-start', 'stage-config', 'nag', 'self-check'];

/**
 * Jest starts the files that took longest in an earlier run first; with no earlier run (a fresh clone) it starts the
 * largest. These files are slow whatever their size, so they start first either way, and neither worker ends the run
 * alone on one of them.
 */
export default class SlowFirst extends Sequencer {
  override async sort(tests: Test[]): Promise<Test[]> {
    const sorted = await super.sort(tests);
    const rank = (test: Test) => {
      const index = SLOW.findIndex((name) => test.path.endsWith(`/${name}.test.ts`));
      return index === -1 ? SLOW.length : index;
    };
    return [...sorted].sort((a, b) => rank(a) - rank(b));
  }
}
