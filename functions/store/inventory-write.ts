import { randomUUID } from 'node:crypto';
import type { AttributeValue, Update, UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import { AdjustmentConflictError, QuantityConflictError } from '../inventory/errors';
import {
  type ChangeNote,
  type ChangeOrigin,
  type InventoryChange,
  type InventoryItem,
  MAX_QUANTITY,
  REPEATED_CHANGE_WINDOW_SECONDS,
} from '../inventory/types';
import { changeOriginAttribute, LAST_CHANGE, PET_ID } from './inventory-row';

/** What an entry's write sets and on what condition, besides the entry existing and not being a repeat. */
export interface EntryUpdateSpec {
  /** The new quantity, as an update-expression operand (`:quantity`, `quantity + :delta`). */
  quantity: string;
  condition?: string;
  values: Record<string, AttributeValue>;
}

/**
 * What one change (set, compare-and-set or adjust) writes, the origin it signs, and the error its failed condition
 * means on the stored entry (undefined: only a missing entry fails it, 404).
 */
export function changeWrite(
  petId: string,
  change: InventoryChange & ChangeNote,
  changeOrigin: ChangeOrigin,
): { write: EntryUpdateSpec; signed: ChangeOrigin; refused: (stored: InventoryItem) => Error | undefined } {
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
      refused: (stored) => new AdjustmentConflictError(petId, adjustBy, stored.quantity),
    };
  }
  const { quantity, expectedQuantity: expected } = change;
  const values = { ':quantity': { N: String(quantity) } };
  if (expected === undefined)
    return { write: { quantity: ':quantity', values }, signed: origin, refused: () => undefined };
  return {
    write: {
      quantity: ':quantity',
      condition: 'quantity = :expected',
      values: { ...values, ':expected': { N: String(expected) } },
    },
    signed: origin,
    refused: (stored) => new QuantityConflictError(petId, expected, stored.quantity),
  };
}

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
    UpdateExpression: `SET quantity = ${write.quantity}, ${LAST_CHANGE} = :change`,
    ConditionExpression: [
      `attribute_exists(${PET_ID})`,
      ...(write.condition ? [write.condition] : []),
      notRepeated,
    ].join(' AND '),
    ExpressionAttributeNames: { '#at': 'at' },
    ExpressionAttributeValues: {
      ...write.values,
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
