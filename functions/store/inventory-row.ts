import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { INVENTORY_LIST_INDEX, INVENTORY_TABLE_KEY } from '../../service/names';
import {
  CHANGE_REASONS,
  type ChangeOrigin,
  INVENTORY_ITEM_FIELD_LIST,
  type InventoryItem,
  type ItemField,
} from '../inventory/types';
import { MalformedRowError } from './storage-errors';

/** The table's key attribute (service/names.ts): the entry's petId. */
export const PET_ID = INVENTORY_TABLE_KEY.name;

/** The model's attributes as a projection, each by a placeholder (`status` is a reserved word). */
export const MODEL_PROJECTION = {
  expression: INVENTORY_ITEM_FIELD_LIST.map(([name]) => `#${name}`).join(', '),
  names: Object.fromEntries(INVENTORY_ITEM_FIELD_LIST.map(([name]) => [`#${name}`, attributeName(name)])),
};

/** The attribute that stores a field: the field's name (the key attribute is named in service/names.ts). */
function attributeName(field: keyof InventoryItem): string {
  return field === 'petId' ? PET_ID : field;
}

/** A field's value as the attribute the table stores: numbers as Number attributes, int64 digits as they are. */
function fieldAttribute(field: ItemField, value: string | number): AttributeValue {
  return field.kind === 'enum' ? { S: String(value) } : { N: String(value) };
}

/** A field's value read from its stored attribute; undefined when the attribute is missing or breaks the field. */
function fieldValue(field: ItemField, attribute: AttributeValue | undefined): string | number | undefined {
  if (field.kind === 'enum') return field.values.includes(attribute?.S ?? '') ? attribute?.S : undefined;
  if (attribute?.N === undefined) return undefined;
  return field.kind === 'int64' ? attribute.N : Number(attribute.N);
}

/** The attribute where every writer puts who and why (a {@link ChangeOrigin}), in the write that changes the entry. */
export const LAST_CHANGE = 'lastChange';

/** The list index's one partition, so one ordered Query reads the whole list (capacity: docs/performance.md). */
export const LIST_PARTITION = '0';

/** A ChangeOrigin as the Map attribute the table stores. */
export function changeOriginAttribute(origin: ChangeOrigin): AttributeValue {
  return { M: marshall(origin, { removeUndefinedValues: true }) };
}

/** Reads the `lastChange` of a stored row; undefined when the writer left none or it breaks the model. */
export function toChangeOrigin(row: Record<string, AttributeValue>): ChangeOrigin | undefined {
  const change = row[LAST_CHANGE]?.M;
  const source = change?.source?.S;
  const actor = change?.actor?.S;
  const at = change?.at?.S;
  if ((source !== 'api' && source !== 'import') || actor === undefined || at === undefined) return undefined;
  const requestId = change?.requestId?.S;
  const adjustBy = change?.adjustBy?.N === undefined ? undefined : Number(change.adjustBy.N);
  const reason = CHANGE_REASONS.find((known) => known === change?.reason?.S);
  const reference = change?.reference?.S;
  return {
    source,
    actor,
    at,
    ...(requestId === undefined ? {} : { requestId }),
    ...(adjustBy === undefined || !Number.isSafeInteger(adjustBy) ? {} : { adjustBy }),
    ...(reason === undefined ? {} : { reason }),
    ...(reference === undefined ? {} : { reference }),
  };
}

/**
 * An entry as the attribute map the table stores, with its list partition: what a writer of a new entry puts (version
 * 1 unless the item says another), with no condition, so only into a table that cannot hold it yet.
 */
export function inventoryAttributes(item: InventoryItem): Record<string, AttributeValue> {
  const attributes: Record<string, AttributeValue> = { version: { N: '1' } };
  for (const [name, field] of INVENTORY_ITEM_FIELD_LIST) {
    const value = item[name];
    if (value !== undefined) attributes[attributeName(name)] = fieldAttribute(field, value);
  }
  attributes[INVENTORY_LIST_INDEX.partition.name] = { N: LIST_PARTITION };
  return attributes;
}

/** An entry as a writer other than the API stores it: the entry and who wrote it, in one item. */
export function signedInventoryAttributes(item: InventoryItem, origin: ChangeOrigin): Record<string, AttributeValue> {
  return { ...inventoryAttributes(item), [LAST_CHANGE]: changeOriginAttribute(origin) };
}

/** Converts a stored row; a row that breaks the model is a {@link MalformedRowError}, not a client error. */
export function toInventoryItem(row: Record<string, AttributeValue>): InventoryItem {
  const item: Record<string, string | number> = {};
  for (const [name, field] of INVENTORY_ITEM_FIELD_LIST) {
    const attribute = row[attributeName(name)];
    if (attribute === undefined && field.optional) continue;
    const value = fieldValue(field, attribute);
    if (value === undefined) throw new MalformedRowError('InventoryItem', row[PET_ID]?.N ?? '?', name);
    item[name] = value;
  }
  return item as InventoryItem;
}
