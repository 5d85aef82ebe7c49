import { parsePetId } from '../../functions/inventory/pet-id';
import type { PetChange } from '../../functions/inventory/types';
import { parseInventoryUpdate } from '../../functions/inventory/update';
import { type CsvRow, check, type LineProblem, readCsvTable, repeatedPetId, stripBom } from './csv';

/** A change of a file and the line it is on. */
export interface LocatedChange {
  line: number;
  change: PetChange;
}

/**
 * The columns of a change file: the pet, then what a PATCH body says of it (`adjustBy` or `quantity`, and why).
 * Every column but petId may be left out of the header; an empty cell is an absent member.
 */
const REQUIRED = ['petId'] as const;
const OPTIONAL = ['adjustBy', 'quantity', 'reason', 'reference'] as const;
type ChangeRow = CsvRow<(typeof REQUIRED)[number], (typeof OPTIONAL)[number]>;

/** A JSON number as written (RFC 8259 §6): the only cells that go into the body as numbers. */
const JSON_NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

/**
 * Validates a change file (CSV: `petId,adjustBy|quantity,reason,reference`) row by row with the API's own rules, a
 * pet at most once; every problem comes with its line.
 */
export function parseChangeFile(text: string): { changes: LocatedChange[]; problems: LineProblem[] } {
  const { rows, problems } = readCsvTable(stripBom(text), REQUIRED, OPTIONAL);
  const changes: LocatedChange[] = [];
  // Every row whose petId reads counts, so a pet named twice is reported even when one of its rows has other problems.
  const seen = new Map<string, number>();
  for (const row of rows) {
    const errors: string[] = [];
    const petId = check(errors, () => parsePetId(row.fields.petId));
    const repeated = petId === undefined ? undefined : repeatedPetId(seen, petId, row.line);
    if (repeated !== undefined) errors.push(repeated);
    const change = readChange(row, errors);
    if (petId !== undefined && change !== undefined && errors.length === 0)
      changes.push({ line: row.line, change: { ...change, petId } });
    else problems.push({ line: row.line, message: errors.join('; ') });
  }
  return { changes, problems: problems.sort((a, b) => a.line - b.line) };
}

/** One row's change (its petId aside) as the PATCH body its cells make, read by the PATCH's rules. */
function readChange({ fields }: ChangeRow, errors: string[]): ReturnType<typeof parseInventoryUpdate> | undefined {
  const { adjustBy = '', quantity = '' } = fields;
  if ((adjustBy === '') === (quantity === '')) {
    errors.push(adjustBy === '' ? 'adjustBy or quantity is required' : 'give adjustBy or quantity, not both');
    return undefined;
  }
  const [name, cell] = adjustBy === '' ? ['quantity', quantity] : ['adjustBy', adjustBy];
  // A cell that is not a JSON number goes in as a string, which the body's rule then refuses by name.
  const body = [`${JSON.stringify(name)}:${JSON_NUMBER.test(cell) ? cell : JSON.stringify(cell)}`];
  for (const member of ['reason', 'reference'] as const) {
    const value = fields[member] ?? '';
    if (value !== '') body.push(`${JSON.stringify(member)}:${JSON.stringify(value)}`);
  }
  const change = check(errors, () => parseInventoryUpdate(`{${body.join(',')}}`));
  // The rule says "got a string"; the operator fixing the file wants the cell.
  if (change === undefined && !JSON_NUMBER.test(cell)) errors.push(`the ${name} cell is ${JSON.stringify(cell)}`);
  return change;
}
