import { atChange, ValidationError } from './errors';
import { parseFieldMember } from './item-fields';
import {
  describeJsonType,
  isJsonObject,
  type JsonWithLiterals,
  parseJsonWithLiterals,
  topLevelParts,
} from './json-literals';
import { integerRule } from './quantity';
import {
  CHANGE_REASONS,
  type ChangeNote,
  INVENTORY_ITEM_FIELDS,
  type InventoryChange,
  type ItemField,
  MAX_QUANTITY,
  type PetChange,
} from './types';

/** The body's members read as fields: `quantity` (with `expectedQuantity`) or `adjustBy`, and the `reason`. */
const MEMBERS = {
  quantity: INVENTORY_ITEM_FIELDS.quantity,
  expectedQuantity: INVENTORY_ITEM_FIELDS.quantity,
  adjustBy: { kind: 'integer', min: -MAX_QUANTITY, max: MAX_QUANTITY, nonZero: true },
  reason: { kind: 'enum', values: CHANGE_REASONS },
} as const satisfies Record<string, ItemField>;

/** What a PATCH body may say, in the order messages list it. */
const BODY_MEMBERS = [...Object.keys(MEMBERS), 'reference'];

/** What one change of a batch may say: a PATCH body and its petId. */
const CHANGE_MEMBERS = ['petId', ...BODY_MEMBERS];

/** The shape of a PATCH body and of a batch's, as messages about a missing or empty body ask for it. */
export const UPDATE_SHAPE = '{"quantity": <integer>} or {"adjustBy": <integer>}';
export const CHANGES_SHAPE = '{"changes": [{"petId": <integer>, "adjustBy": <integer>}, ...]}';

/** Most changes one `POST /inventory/changes` applies: DynamoDB's TransactWriteItems takes at most 100 actions. */
export const MAX_CHANGES = 100;

export const MAX_REFERENCE_CHARACTERS = 255;

/** A control character (general category Cc: U+0000–U+001F, U+007F–U+009F), which a reference may not hold. */
const CONTROL_CHARACTER = /\p{Cc}/u;

/** Parses the body of `PATCH /inventory/{petId}` by docs/api.md's rules. @throws ValidationError naming the rule */
export function parseInventoryUpdate(text: string): InventoryChange & ChangeNote {
  const json = parseBody(text, UPDATE_SHAPE);
  const body = json.value;
  if (!isJsonObject(body)) {
    throw new ValidationError('The request body must be a JSON object with the member quantity or adjustBy.');
  }
  requireMembers(body, text, BODY_MEMBERS, 'the body', 'The request body');
  return readChange(json, body);
}

/**
 * Parses the body of `POST /inventory/changes`: `{"changes": [...]}`, 1 to {@link MAX_CHANGES} changes, each a PATCH
 * body plus its petId, a petId at most once. @throws ValidationError naming the rule and the change (`changes[i]`)
 */
export function parseInventoryChanges(text: string): PetChange[] {
  const json = parseBody(text, CHANGES_SHAPE);
  const body = json.value;
  if (!isJsonObject(body)) {
    throw new ValidationError('The request body must be a JSON object with the member changes.');
  }
  requireMembers(body, text, ['changes'], 'the body', 'The request body');
  const changes = body.changes;
  if (!Array.isArray(changes) || changes.length < 1 || changes.length > MAX_CHANGES) {
    const got = Array.isArray(changes) ? `${changes.length} changes` : describeJsonType(changes);
    throw new ValidationError(`changes must be an array of 1 to ${MAX_CHANGES} changes; got ${got}.`);
  }
  // The array's source text after `"changes":`, for each change's own members as written.
  const arrayText = (topLevelParts(text)[0]?.text ?? '').replace(/^"(?:[^"\\]|\\.)*"\s*:/, '');
  const sources = topLevelParts(arrayText);
  const firstAt = new Map<string, number>();
  return changes.map((change: unknown, index) => {
    const petChange = readPetChange(json, change, sources[index]?.text ?? '', index);
    const earlier = firstAt.get(petChange.petId);
    if (earlier !== undefined)
      throw atChange(
        new ValidationError(`petId ${petChange.petId} is already changes[${earlier}]; a request changes a pet once.`),
        index,
        petChange.petId,
      );
    firstAt.set(petChange.petId, index);
    return petChange;
  });
}

/** One change of a batch: its petId first (its messages say `changes[i]:`), then a PATCH body's rules. */
function readPetChange(json: JsonWithLiterals, change: unknown, source: string, index: number): PetChange {
  if (!isJsonObject(change)) {
    throw atChange(
      new ValidationError(
        `A change must be a JSON object with petId and quantity or adjustBy; got ${describeJsonType(change)}.`,
      ),
      index,
    );
  }
  let petId: string;
  try {
    petId = parseFieldMember(json, change, 'petId', INVENTORY_ITEM_FIELDS.petId) as string;
  } catch (error) {
    throw atChange(error as Error, index);
  }
  try {
    requireMembers(change, source, CHANGE_MEMBERS, 'a change', 'The change');
    return { petId, ...readChange(json, change) };
  } catch (error) {
    throw atChange(error as Error, index, petId);
  }
}

/** The body as JSON with the literals it was written as. */
function parseBody(text: string, shape: string): JsonWithLiterals {
  if (text.trim().length === 0) throw new ValidationError(`The request body is empty; send ${shape}.`);
  try {
    return parseJsonWithLiterals(text);
  } catch {
    throw new ValidationError('The request body is not valid JSON.', 'MALFORMED_JSON');
  }
}

/** Refuses a member not in `allowed`, and one written twice (`source` is the object's text as written). */
function requireMembers(holder: object, source: string, allowed: readonly string[], what: string, subject: string) {
  const members = Object.keys(holder);
  const unknown = members.filter((name) => !allowed.includes(name));
  if (unknown.length > 0) {
    const names = allowed.length > 1 ? `${allowed.slice(0, -1).join(', ')} and ${allowed.at(-1)}` : allowed[0];
    throw new ValidationError(
      `Unknown member${unknown.length > 1 ? 's' : ''} ${unknown.map((m) => JSON.stringify(m)).join(', ')}; ${what} takes only ${names}.`,
    );
  }
  if (topLevelParts(source).length !== members.length) {
    throw new ValidationError(`${subject} repeats a member; send each member once.`);
  }
}

/** What a PATCH body says, its members known and each once: the change, then its reason and reference. */
function readChange(json: JsonWithLiterals, body: Record<string, unknown>): InventoryChange & ChangeNote {
  const read = (member: 'quantity' | 'expectedQuantity' | 'adjustBy') =>
    parseFieldMember(json, body, member, MEMBERS[member]) as number;
  let change: InventoryChange;
  if ('adjustBy' in body) {
    if ('quantity' in body || 'expectedQuantity' in body)
      throw new ValidationError(
        'adjustBy cannot be combined with quantity or expectedQuantity; send either {"quantity": n} or {"adjustBy": n}.',
      );
    change = { adjustBy: read('adjustBy') };
  } else if (!('quantity' in body)) {
    throw new ValidationError(
      `quantity or adjustBy is required (expectedQuantity goes with quantity); ${integerRule('quantity', MEMBERS.quantity)}.`,
    );
  } else {
    const quantity = read('quantity');
    change = 'expectedQuantity' in body ? { quantity, expectedQuantity: read('expectedQuantity') } : { quantity };
  }
  return { ...change, ...readNote(json, body) };
}

/** The optional `reason` and `reference`, as given; absent stays absent. */
function readNote(json: JsonWithLiterals, body: Record<string, unknown>): ChangeNote {
  const note: ChangeNote = {};
  if ('reason' in body) note.reason = parseFieldMember(json, body, 'reason', MEMBERS.reason) as ChangeNote['reason'];
  if ('reference' in body) note.reference = readReference(body.reference);
  return note;
}

function readReference(reference: unknown): string {
  const rule = `reference must be a string of 1 to ${MAX_REFERENCE_CHARACTERS} characters, none a control character`;
  if (typeof reference !== 'string') throw new ValidationError(`${rule}; got ${describeJsonType(reference)}.`);
  const characters = [...reference].length;
  if (characters < 1 || characters > MAX_REFERENCE_CHARACTERS)
    throw new ValidationError(`${rule}; got ${characters} characters.`);
  const control = CONTROL_CHARACTER.exec(reference)?.[0];
  if (control !== undefined)
    throw new ValidationError(
      `${rule}; got U+${control.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')} in it.`,
    );
  return reference;
}
