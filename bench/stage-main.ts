/**
 * `npm run bench:stage -- --url … --pet …` (docs/deploying.md): bench/patch.ts's API-only scenarios on a stage.
 * The pet's stock ends as it started, but each write is real (in its history; keys kept 24 hours).
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { checkedApiUrl } from '../cli/commands/context';
import { parsePetId } from '../functions/inventory/pet-id';
import { closeHttp } from './http';
import { measureScenarios, PATCH_SCENARIOS, patchTable, patchTargets, scenarioContext, stockOf } from './patch';
import { targetsTable } from './stats';

const USAGE =
  'usage: PETSTORE_API_KEY=<write key> npm run bench:stage -- --url <https base URL ending in /v1> --pet <petId> ' +
  '[--key <write key>] [--iterations N] [--out FILE]';

/** The checked options, or undefined after printing what is wrong and the usage. */
function options() {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' },
      key: { type: 'string' },
      pet: { type: 'string' },
      iterations: { type: 'string', default: '200' },
      out: { type: 'string' },
    },
  });
  const problems: string[] = [];
  const checked = <T>(check: () => T): T | undefined => {
    try {
      return check();
    } catch (error) {
      problems.push((error as Error).message);
      return undefined;
    }
  };
  const petId = checked(() => parsePetId(values.pet, '--pet'));
  const baseUrl = values.url === undefined ? undefined : checked(() => checkedApiUrl(values.url as string));
  const apiKey = values.key ?? process.env.PETSTORE_API_KEY;
  if (!apiKey) problems.push('no write key: set PETSTORE_API_KEY (or pass --key, which shows in ps)');
  const iterations = Number(values.iterations);
  if (!baseUrl || !apiKey || petId === undefined || !(iterations >= 1)) {
    process.stderr.write(`${problems.map((line) => `${line}\n`).join('')}${USAGE}\n`);
    return undefined;
  }
  return { baseUrl, apiKey, petId, iterations, out: values.out };
}

/** Measures on the stage and prints the table and the verdicts; leaves the pet's stock as it found it. */
async function measureOnStage(checked: NonNullable<ReturnType<typeof options>>): Promise<void> {
  const { baseUrl, apiKey, petId, iterations } = checked;
  const start = await stockOf(baseUrl, apiKey, petId);
  const context = scenarioContext({ baseUrl, apiKey, petId, quantity: start });
  const scenarios = PATCH_SCENARIOS.filter((scenario) => !scenario.local);
  try {
    const result = await measureScenarios(scenarios, context, Math.min(20, iterations), iterations);
    process.stdout.write(`## PATCH /inventory/{petId} on ${baseUrl}\n\n${patchTable(result)}\n\n`);
    process.stdout.write(`${targetsTable(patchTargets(result))}\n`);
    if (checked.out) writeFileSync(checked.out, `${JSON.stringify({ baseUrl, ...result }, null, 2)}\n`);
  } finally {
    // Back to the stock it had, whatever happened (a set, not an adjustment: nothing to reconcile).
    await context.patch({ quantity: start });
  }
  const after = await stockOf(baseUrl, apiKey, petId);
  if (after !== start) throw new Error(`pet ${petId}: stock ${after} after the run, ${start} before`);
}

async function main(): Promise<void> {
  const checked = options();
  if (!checked) {
    process.exitCode = 2;
    return;
  }
  await measureOnStage(checked).finally(closeHttp);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:stage: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
