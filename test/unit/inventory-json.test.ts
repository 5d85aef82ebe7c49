import { inventoryItemJson, inventoryListJson } from '../../functions/inventory/json';
import { comparePetIds } from '../../functions/inventory/repository';
import { anInventoryItem } from '../fixtures/builders';

describe('Domain: inventory JSON and ordering', () => {
  it('writes int64 petIds as bare numbers with every digit', () => {
    const text = inventoryItemJson(anInventoryItem({ petId: '9223372036854775807', quantity: 2, status: 'sold' }));
    expect(text).toBe('{"petId":9223372036854775807,"quantity":2,"status":"sold"}');
  });

  it('writes a list that JSON.parse reads back as the same entries (small ids)', () => {
    const items = [anInventoryItem({ petId: '1' }), anInventoryItem({ petId: '-3', quantity: 0, status: 'pending' })];
    expect(JSON.parse(inventoryListJson(items))).toEqual([
      { petId: 1, quantity: 3, status: 'available' },
      { petId: -3, quantity: 0, status: 'pending' },
    ]);
    expect(inventoryListJson([])).toBe('[]');
  });

  it('orders petIds numerically, negatives first, beyond 2^53', () => {
    const ids = [
      '10',
      '9',
      '-1',
      '-10',
      '0',
      '9223372036854775807',
      '9007199254740993',
      '9007199254740992',
      '-9223372036854775808',
    ];
    expect([...ids].sort(comparePetIds)).toEqual([
      '-9223372036854775808',
      '-10',
      '-1',
      '0',
      '9',
      '10',
      '9007199254740992',
      '9007199254740993',
      '9223372036854775807',
    ]);
  });
});
