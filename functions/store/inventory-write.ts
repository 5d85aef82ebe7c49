/**
 * An entry's write as DynamoDB receives it: the one conditional UpdateItem, and the condition that makes it apply
 * once across the attempts of one change. Apart from InventoryTable, which sends it, because the benchmark sends that
 * very request without the repository.
 */

import { randomUUID } from 'node:crypto';
import type { AttributeValue, UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import { type ChangeOrigin, REPEATED_CHANGE_WINDOW_SECONDS } from '../inventory/types';
import { changeOriginAttribute, LAST_CHANGE, PET_ID } from './inventory-row';

/** What an entry's write sets and on what condition, besides the entry existing and not being a repeat. */
export interface EntryUpdateSpec {
  /** The new quantity, as an update-expression operand (`:quantity`, `quantity + :delta`). */
  quantity: string;
  condition?: string;
  values: Record<string, AttributeValue>;
}

/**
 * The UpdateItem of an entry's write (InventoryTable's adjustQuantity and setQuantity; the benchmark sends the same
 * request straight): the quantity and `lastChange` together, on condition that the entry exists, `write.condition`
 * holds, and it is not an attempt of a change that already landed; the stored item is returned either way.
 */
export function entryUpdate(
  tableName: string,
  petId: string,
  origin: ChangeOrigin,
  write: EntryUpdateSpec,
): { input: UpdateItemCommandInput; repeat: ReturnType<typeof unlessRepeated> } {
  const repeat = unlessRepeated(origin);
  const conditions = [`attribute_exists(${PET_ID})`, ...(write.condition ? [write.condition] : []), repeat.expression];
  return {
    repeat,
    input: {
      TableName: tableName,
      Key: { [PET_ID]: { N: petId } },
      UpdateExpression: `SET quantity = ${write.quantity}, ${LAST_CHANGE} = :change`,
      ConditionExpression: conditions.join(' AND '),
      ExpressionAttributeNames: repeat.names,
      ExpressionAttributeValues: {
        ...write.values,
        ':change': changeOriginAttribute({ ...origin, changeId: repeat.changeId }),
        ...repeat.values,
      },
      ReturnValues: 'ALL_NEW',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/**
 * The condition that makes a write apply once across the attempts of one change. A change is named by
 * `origin.changeId` (or, when absent, a name drawn for this call), which the write keeps in the entry's
 * `lastChange`; the condition refuses an attempt whose change is already the entry's last one, made within
 * {@link REPEATED_CHANGE_WINDOW_SECONDS} of this attempt's `origin.at`, and `landed` tells that refusal from the
 * others on the stored item the refusal returns. What it closes:
 * - the SDK's retry of an UpdateItem that DynamoDB applied but whose answer was lost (a reset connection, a
 *   time-out): the retry is the same request, so it carries the same changeId and finds it;
 * - a client's repeat under an Idempotency-Key whose first answer the idempotency store could not keep (that write
 *   failed after the change landed): the handler names the change after the key, so the repeat finds it.
 *
 * The stored item is then exactly the entry as the change left it: the last change is the one refused. Once another
 * change came in between, the repeat cannot be recognized and applies again (the case is in docs/api.md).
 */
export function unlessRepeated(origin: ChangeOrigin): {
  changeId: string;
  expression: string;
  names: Record<string, string>;
  values: Record<string, AttributeValue>;
  landed: (stored: Record<string, AttributeValue>) => boolean;
} {
  const changeId = origin.changeId ?? randomUUID();
  const at = Date.parse(origin.at);
  const since = new Date((Number.isNaN(at) ? Date.now() : at) - REPEATED_CHANGE_WINDOW_SECONDS * 1000).toISOString();
  return {
    changeId,
    expression: `(attribute_not_exists(${LAST_CHANGE}.changeId) OR ${LAST_CHANGE}.changeId <> :changeId OR ${LAST_CHANGE}.#at < :changedSince)`,
    names: { '#at': 'at' },
    values: { ':changeId': { S: changeId }, ':changedSince': { S: since } },
    landed: (stored) => {
      const last = stored[LAST_CHANGE]?.M;
      return last?.changeId?.S === changeId && (last.at?.S ?? '') >= since;
    },
  };
}
