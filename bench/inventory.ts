import type { InventoryItem, PetStatus } from '../functions/inventory/types';

/** The small inventory seeded before the cold-path phase, there in every later one. */
export const COLD_PATH_INVENTORY = 7;

const STATUSES: readonly PetStatus[] = ['available', 'pending', 'sold'];
const MASK64 = (1n << 64n) - 1n;

/** A 19-digit id for entry `i`: splitmix64 of i, so the ids look random (the worst case for gzip) and are distinct. */
function longPetId(i: number): string {
  let z = (BigInt(i) * 0x9e3779b97f4a7c15n) & MASK64;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
  z ^= z >> 31n;
  return String(1_000_000_000_000_000_000n + (z % 8_000_000_000_000_000_000n));
}

/** The benchmarks' inventory, entries from+1..to: odd entries have id i, even ones a 19-digit id; new, at version 1. */
export function benchInventory(from: number, to: number): InventoryItem[] {
  const items: InventoryItem[] = [];
  for (let i = from + 1; i <= to; i++) {
    items.push({
      petId: i % 2 === 1 ? String(i) : longPetId(i),
      quantity: (i * 7919) % 1000,
      status: STATUSES[i % 3] as PetStatus,
      version: 1,
    });
  }
  return items;
}
