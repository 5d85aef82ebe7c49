import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { changeEventJson } from '../../functions/inventory/change-event';
import { toChangeEvent } from '../../functions/store/history-table';
import { MalformedRowError } from '../../functions/store/storage-errors';

/** A feed row as the history function stores it. */
const aFeedRow = (overrides: Record<string, AttributeValue | undefined> = {}): Record<string, AttributeValue> => {
  const row: Record<string, AttributeValue | undefined> = {
    petId: { N: '9223372036854775807' },
    sequence: { S: '0000000000000000000000000000000000000042' },
    feed: { N: '0' },
    feedSequence: { N: '17' },
    version: { N: '3' },
    at: { S: '2026-12-06T04:00:00.000Z' },
    quantity: { N: '5' },
    previousQuantity: { N: '2' },
    adjustBy: { N: '3' },
    status: { S: 'available' },
    previousStatus: { S: 'available' },
    source: { S: 'api' },
    actor: { S: 'key_0123456789abcdef' },
    reason: { S: 'received' },
    ...overrides,
  };
  return Object.fromEntries(Object.entries(row).filter(([, value]) => value !== undefined)) as Record<
    string,
    AttributeValue
  >;
};

describe('Function: toChangeEvent', () => {
  it('reads a feed row as the event: its feed sequence as the id, the version, the history members', () => {
    const event = toChangeEvent(aFeedRow());
    expect(event).toEqual({
      id: '17',
      version: 3,
      petId: '9223372036854775807',
      at: '2026-12-06T04:00:00.000Z',
      quantity: 5,
      previousQuantity: 2,
      adjustBy: 3,
      status: 'available',
      previousStatus: 'available',
      source: 'api',
      actor: 'key_0123456789abcdef',
      reason: 'received',
    });
    expect(changeEventJson(event)).toBe(
      '{"id":"17","petId":9223372036854775807,"version":3,"at":"2026-12-06T04:00:00.000Z","source":"api",' +
        '"actor":"key_0123456789abcdef","requestId":null,"quantity":5,"previousQuantity":2,"adjustBy":3,' +
        '"status":"available","previousStatus":"available","reason":"received","reference":null}',
    );
  });

  it.each([
    ['feedSequence', { feedSequence: undefined }],
    ['feedSequence', { feedSequence: { N: '0' } }],
    ['version', { version: undefined }],
    ['version', { version: { N: '1.5' } }],
    ['status', { status: { S: 'lost' } }],
  ])('refuses a row whose %s is missing or broken with MalformedRowError', (attribute, overrides) => {
    expect(() => toChangeEvent(aFeedRow(overrides))).toThrow(MalformedRowError);
    expect(() => toChangeEvent(aFeedRow(overrides))).toThrow(`attribute ${attribute} `);
  });
});
