import { alternate } from '../../bench/stats';

/** A repeatable stand-in for Math.random (mulberry32), so the test's orders are the same on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One task per name, each adding its name to `ran` when it runs. */
function recording<T>(ran: T[], names: T[]): (() => Promise<void>)[] {
  return names.map((name) => async () => void ran.push(name));
}

describe('the benchmark alternation', () => {
  test('runs every task exactly once per round', async () => {
    const ran: string[] = [];
    await alternate(50, recording(ran, ['a', 'b', 'c', 'd']), seeded(1));
    expect(ran).toHaveLength(200);
    for (let round = 0; round < 50; round++)
      expect([...ran.slice(round * 4, round * 4 + 4)].sort()).toEqual(['a', 'b', 'c', 'd']);
  });

  test('gives each task other neighbours: no task always runs right after the same one', async () => {
    const ran: string[] = [];
    const names = ['plain', 'cas', 'adjust', 'idempotent', 'raw', 'utility'];
    await alternate(200, recording(ran, names), seeded(7));
    const before = new Map<string, Set<string>>();
    for (let i = 1; i < ran.length; i++) {
      const set = before.get(ran[i] as string) ?? new Set<string>();
      set.add(ran[i - 1] as string);
      before.set(ran[i] as string, set);
    }
    // A rotation gives each task one predecessor; a shuffle each round gives it (nearly) every other task.
    for (const name of names) expect(before.get(name)?.size).toBe(names.length);
  });

  test('leads each round with each task about equally often', async () => {
    const ran: number[] = [];
    await alternate(6000, recording(ran, [0, 1, 2]), seeded(3));
    const leads = [0, 1, 2].map((item) => ran.filter((task, i) => i % 3 === 0 && task === item).length);
    for (const count of leads) expect(Math.abs(count - 2000)).toBeLessThan(200);
  });
});
