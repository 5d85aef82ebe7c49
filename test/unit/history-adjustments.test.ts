import { historyEntryJson, historyTableText } from '../../cli/commands/history';
import { historyEntryFor } from '../../functions/inventory/history';
import type { ChangeOrigin } from '../../functions/inventory/types';
import { toHistoryEntry } from '../../functions/store/history-table';
import { changeOriginAttribute, toChangeOrigin } from '../../functions/store/inventory-row';
import { aHistoryEntry, anInventoryItem } from '../fixtures/builders';

const ADJUSTMENT: ChangeOrigin = {
  source: 'api',
  actor: 'key_1',
  requestId: 'req-2',
  at: '2026-11-24T10:00:00.000Z',
  adjustBy: -2,
};

describe('Domain: the history of adjustments', () => {
  it('records an adjustment with its delta, as the writer put it on the entry', () => {
    const entry = historyEntryFor({
      before: { ...anInventoryItem({ quantity: 5 }), origin: { ...ADJUSTMENT, requestId: 'req-1', adjustBy: 1 } },
      after: { ...anInventoryItem({ quantity: 3 }), origin: ADJUSTMENT },
      recordedAt: '2026-11-24T10:00:01.000Z',
    });
    expect(entry).toMatchObject({ previousQuantity: 5, quantity: 3, adjustBy: -2, requestId: 'req-2' });
  });

  it('records a set after an adjustment without a delta (the set writes a lastChange of its own)', () => {
    const entry = historyEntryFor({
      before: { ...anInventoryItem({ quantity: 3 }), origin: ADJUSTMENT },
      after: {
        ...anInventoryItem({ quantity: 9 }),
        origin: { ...ADJUSTMENT, requestId: 'req-3', adjustBy: undefined },
      },
      recordedAt: '2026-11-24T10:00:01.000Z',
    });
    expect(entry).not.toHaveProperty('adjustBy');
  });

  it('keeps the delta through the entry and the history row', () => {
    expect(toChangeOrigin({ lastChange: changeOriginAttribute(ADJUSTMENT) })).toEqual(ADJUSTMENT);
    const row = toHistoryEntry({
      petId: { N: '1' },
      sequence: { S: '1' },
      at: { S: ADJUSTMENT.at },
      previousQuantity: { N: '5' },
      quantity: { N: '3' },
      previousStatus: { S: 'available' },
      status: { S: 'available' },
      source: { S: 'api' },
      actor: { S: 'key_1' },
      adjustBy: { N: '-2' },
    });
    expect(row.adjustBy).toBe(-2);
  });

  it('shows the delta in `inventory history`: JSON member and signed in the table', () => {
    const entries = [
      aHistoryEntry({ quantity: 4, adjustBy: 1 }),
      aHistoryEntry({ previousQuantity: 4, quantity: 2, adjustBy: -2 }),
    ];
    expect(historyEntryJson(entries[0] as never)).toMatch(/,"adjustBy":1\}$/);
    const text = historyTableText(entries);
    expect(text).toContain('3 -> 4 (+1)');
    expect(text).toContain('4 -> 2 (-2)');
    expect(historyTableText([aHistoryEntry()])).not.toMatch(/\(/);
  });
});
