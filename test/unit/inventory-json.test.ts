import { batchesOf, inventoryItemJson, inventoryListChunks } from '../../functions/inventory/json';
import type { InventoryItem } from '../../functions/inventory/types';
import { anInventoryItem, comparePetIds } from '../fixtures/builders';

async function chunksOf(items: readonly InventoryItem[], perChunk: number): Promise<string[]> {
  const chunks: string[] = [];
  for await (const chunk of inventoryListChunks(batchesOf(items, perChunk))) chunks.push(chunk);
  return chunks;
}

describe('Domain: inventory JSON and ordering', () => {
  it('writes int64 petIds as bare numbers with every digit', () => {
    const text = inventoryItemJson(anInventoryItem({ petId: '9223372036854775807', quantity: 2, status: 'sold' }));
    expect(text).toBe('{"petId":9223372036854775807,"quantity":2,"status":"sold"}');
  });

  it('writes a list in chunks, one per batch and the closing bracket, that JSON.parse reads back joined', async () => {
    const items = [
      anInventoryItem({ petId: '1' }),
      anInventoryItem({ petId: '-3', quantity: 0, status: 'pending' }),
      anInventoryItem({ petId: '7', quantity: 1, status: 'sold' }),
    ];
    for (const perChunk of [1, 2, 3, 100]) {
      const chunks = await chunksOf(items, perChunk);
      expect(chunks).toHaveLength(Math.ceil(items.length / perChunk) + 1);
      expect(JSON.parse(chunks.join(''))).toEqual([
        { petId: 1, quantity: 3, status: 'available' },
        { petId: -3, quantity: 0, status: 'pending' },
        { petId: 7, quantity: 1, status: 'sold' },
      ]);
    }
    expect(await chunksOf([], 10)).toEqual(['[]']);
  });

  it('never closes the array before the last chunk, so a cut-off body is not a whole array', async () => {
    const items = Array.from({ length: 5 }, (_, i) => anInventoryItem({ petId: String(i) }));
    const chunks = await chunksOf(items, 2);
    for (let n = 1; n < chunks.length; n++) expect(() => JSON.parse(chunks.slice(0, n).join(''))).toThrow();
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
