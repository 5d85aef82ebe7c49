import { randomUUID } from 'node:crypto';
import type { AttributeValue, Update, UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import { INVENTORY_LIST_INDEX } from '../../service/names';
import { AdjustmentConflictError, QuantityConflictError } from '../inventory/errors';
import {
  type ChangeNote,
  type ChangeOrigin,
  type InventoryChange,
  type InventoryItem,
  MAX_QUANTITY,
  REPEATED_CHANGE_WINDOW_SECONDS,
} from '../inventory/types';
import { changeOriginAttribute, LAST_CHANGE, LIST_PARTITION, PET_ID } from './inventory-row';

/** What an entry's write sets and on what condition, besides the entry existing and not being a repeat. */
export interface EntryUpdateSpec {
  /** The new quantity, as an update-expression operand (`:quantity`, `quantity + :delta`). */
  quantity: string;
  condition?: string;
  values: Record<string, AttributeValue>;
}

/** What one change writes, the origin it signs, and what its failed condition means on the stored entry. */
export interface ChangeWrite {
  write: EntryUpdateSpec;
  signed: ChangeOrigin;
  /** Whether the stored entry already is what the change asks, so nothing is written (no version, no event). */
  unchanged: (stored: InventoryItem) => boolean;
  /** The error the failed condition means (undefined: only a missing entry fails it, 404). */
  refused: (stored: InventoryItem) => Error | undefined;
}

/**
 * What one change (set, compare-and-set or adjust) writes. A set to the quantity the entry holds writes nothing: a
 * version and an event stand for a change of the stock, and an adjustment always is one (adjustBy is never 0).
 */
export function changeWrite(
  petId: string,
  change: InventoryChange & ChangeNote,
  changeOrigin: ChangeOrigin,
): ChangeWrite {
  const { reason, reference } = change;
  const origin: ChangeOrigin = {
    ...changeOrigin,
    ...(reason === undefined ? {} : { reason }),
    ...(reference === undefined ? {} : { reference }),
  };
  if ('adjustBy' in change) {
    const { adjustBy } = change;
    // quantity + adjustBy within [0, MAX], written on the stored quantity so no addition can overflow the check.
    const bound =
      adjustBy < 0 ? { condition: '>=', value: -adjustBy } : { condition: '<=', value: MAX_QUANTITY - adjustBy };
    return {
      write: {
        quantity: 'quantity + :delta',
        condition: `quantity ${bound.condition} :bound`,
        values: { ':delta': { N: String(adjustBy) }, ':bound': { N: String(bound.value) } },
      },
      signed: { ...origin, adjustBy },
      unchanged: () => false,
      refused: (stored) => new AdjustmentConflictError(petId, adjustBy, stored.quantity),
    };
  }
  const { quantity, expectedQuantity: expected } = change;
  const values = { ':quantity': { N: String(quantity) } };
  const unchanged = (stored: InventoryItem) => stored.quantity === quantity && (expected ?? quantity) === quantity;
  if (expected === undefined)
    return {
      write: { quantity: ':quantity', condition: 'quantity <> :quantity', values },
      signed: origin,
      unchanged,
      refused: () => undefined,
    };
  return {
    write: {
      quantity: ':quantity',
      condition: 'quantity = :expected AND quantity <> :quantity',
      values: { ...values, ':expected': { N: String(expected) } },
    },
    signed: origin,
    unchanged,
    refused: (stored) => new QuantityConflictError(petId, expected, stored.quantity),
  };
}

/** The update that counts an entry's changes: every write of an entry runs it, so `version` rises by 1 per change. */
export const VERSION_INCREMENT = {
  expression: 'version = if_not_exists(version, :zero) + :one',
  values: { ':zero': { N: '0' }, ':one': { N: '1' } },
} as const;

/**
 * An entry's write, alone (`input`) or in a transaction (`update`), if it exists and `write.condition` holds; a change
 * applies once across its attempts (`origin.changeId`): a retry finds it as the entry's last, and `landed` says so.
 */
export function entryUpdate(
  tableName: string,
  petId: string,
  origin: ChangeOrigin,
  write: EntryUpdateSpec,
): { update: Update; input: UpdateItemCommandInput; landed: (stored: Record<string, AttributeValue>) => boolean } {
  const changeId = origin.changeId ?? randomUUID();
  const at = Date.parse(origin.at);
  const since = new Date((Number.isNaN(at) ? Date.now() : at) - REPEATED_CHANGE_WINDOW_SECONDS * 1000).toISOString();
  const notRepeated = `(attribute_not_exists(${LAST_CHANGE}.changeId) OR ${LAST_CHANGE}.changeId <> :changeId OR ${LAST_CHANGE}.#at < :changedSince)`;
  const update: Update = {
    TableName: tableName,
    Key: { [PET_ID]: { N: petId } },
    UpdateExpression: `SET quantity = ${write.quantity}, ${LAST_CHANGE} = :change, ${VERSION_INCREMENT.expression}`,
    ConditionExpression: [
      `attribute_exists(${PET_ID})`,
      ...(write.condition ? [write.condition] : []),
      notRepeated,
    ].join(' AND '),
    ExpressionAttributeNames: { '#at': 'at' },
    ExpressionAttributeValues: {
      ...write.values,
      ...VERSION_INCREMENT.values,
      ':change': changeOriginAttribute({ ...origin, changeId }),
      ':changeId': { S: changeId },
      ':changedSince': { S: since },
    },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  };
  const landed = (stored: Record<string, AttributeValue>) => {
    const last = stored[LAST_CHANGE]?.M;
    return last?.changeId?.S === changeId && (last.at?.S ?? '') >= since;
  };
  return { update, input: { ...update, ReturnValues: 'ALL_NEW' }, landed };
}

/**
 * An import's write of one entry: created at version 1, or given the row's quantity and status and its next version;
 * an entry that already holds them fails the condition and is left as it is (no version, no event).
 */
export function importUpdate(tableName: string, item: InventoryItem, origin: ChangeOrigin): Update {
  return {
    TableName: tableName,
    Key: { [PET_ID]: { N: item.petId } },
    UpdateExpression: `SET quantity = :quantity, #status = :status, #list = :list, ${LAST_CHANGE} = :change, ${VERSION_INCREMENT.expression}`,
    ConditionExpression: `attribute_not_exists(${PET_ID}) OR quantity <> :quantity OR #status <> :status`,
    ExpressionAttributeNames: { '#status': 'status', '#list': INVENTORY_LIST_INDEX.partition.name },
    ExpressionAttributeValues: {
      ':quantity': { N: String(item.quantity) },
      ':status': { S: item.status },
      ':list': { N: LIST_PARTITION },
      ':change': changeOriginAttribute(origin),
      ...VERSION_INCREMENT.values,
    },
  };
}
