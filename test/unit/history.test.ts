import type { DynamoDBRecord } from 'aws-lambda';
import { historyEntryJson, historyTableText, parseSince } from '../../cli/commands/history';
import { UsageError } from '../../cli/errors';
import { createHandler, entryWriteOf } from '../../functions/handlers/record-history';
import {
  type HistoryEntry,
  type HistoryRecorder,
  historyEntryFor,
  IncompleteHistoryError,
  type StoredEntry,
  type StreamChange,
} from '../../functions/inventory/history';
import type { ChangeOrigin } from '../../functions/inventory/types';
import { changeOriginAttribute, inventoryAttributes, LAST_CHANGE } from '../../functions/store/inventory-row';
import { aHistoryEntry, aLambdaContext } from '../fixtures/builders';

const API: ChangeOrigin = { source: 'api', actor: 'key_1', requestId: 'req-1', at: '2026-11-23T10:00:00.000Z' };
const IMPORT: ChangeOrigin = {
  source: 'import',
  actor: 'import stock.csv by ops@host run 1',
  at: '2026-11-23T09:00:00.000Z',
};

/** The history row of an import that created pet `petId` with 3 available. */
function importCreation(petId: string): HistoryEntry {
  return {
    petId,
    at: IMPORT.at,
    previousQuantity: null,
    quantity: 3,
    previousStatus: null,
    status: 'available',
    source: 'import',
    actor: IMPORT.actor,
  };
}

function anEntry(overrides: Partial<StoredEntry> = {}): StoredEntry {
  return { petId: '1', quantity: 3, status: 'available', version: 1, ...overrides };
}

/** A stream record as Lambda delivers it (images as the inventory table stores entries). */
function aStreamRecord(
  sequenceNumber: string,
  before: StoredEntry | undefined,
  after: StoredEntry | undefined,
): DynamoDBRecord {
  const image = (entry: StoredEntry | undefined) =>
    entry && {
      ...inventoryAttributes(entry),
      ...(entry.origin ? { [LAST_CHANGE]: changeOriginAttribute(entry.origin) } : {}),
    };
  return {
    eventID: `event-${sequenceNumber}`,
    eventName: before ? (after ? 'MODIFY' : 'REMOVE') : 'INSERT',
    eventSource: 'aws:dynamodb',
    dynamodb: {
      ApproximateCreationDateTime: 1_795_430_000,
      Keys: { petId: { N: (after ?? before)?.petId ?? '1' } },
      ...(before ? { OldImage: image(before) as never } : {}),
      ...(after ? { NewImage: image(after) as never } : {}),
      SequenceNumber: sequenceNumber,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  };
}

class RecordingHistory implements HistoryRecorder {
  readonly rows = new Map<string, HistoryEntry>();
  readonly versions = new Map<string, number | undefined>();
  constructor(private readonly failOn = new Set<string>()) {}
  async record(changes: readonly StreamChange[]): Promise<void> {
    for (const [index, { entry, sequenceNumber, version }] of changes.entries()) {
      if (this.failOn.has(sequenceNumber))
        throw new IncompleteHistoryError(index, { cause: new Error('ProvisionedThroughputExceededException') });
      this.rows.set(sequenceNumber, entry);
      this.versions.set(sequenceNumber, version);
    }
  }
}

/** The function's answer to one batch of `records`, and the rows it wrote, failing the writes of `failOn`. */
async function recordBatch(records: DynamoDBRecord[], failOn: string[] = []) {
  const history = new RecordingHistory(new Set(failOn));
  const response = await createHandler({ history })({ Records: records }, aLambdaContext());
  return { response, rows: history.rows, versions: history.versions };
}

describe('Domain: historyEntryFor', () => {
  it("keeps the writer and takes the stream's time when the writer's time is not a date (its TTL would be NaN)", () => {
    const entry = historyEntryFor({
      after: anEntry({ origin: { ...IMPORT, at: 'yesterday' } }),
      recordedAt: '2026-11-23T09:00:01.000Z',
    });
    expect(entry).toMatchObject({ at: '2026-11-23T09:00:01.000Z', source: 'import', actor: IMPORT.actor });
  });

  it('records a created entry with null previous quantity and status', () => {
    const entry = historyEntryFor({ after: anEntry({ origin: IMPORT }), recordedAt: '2026-11-23T09:00:01.000Z' });
    expect(entry).toEqual(importCreation('1'));
  });

  it('records a quantity change with the writer, its request id and its time', () => {
    const entry = historyEntryFor({
      before: anEntry({ origin: IMPORT }),
      after: anEntry({ quantity: 4, origin: API }),
      recordedAt: '2026-11-23T10:00:01.000Z',
    });
    // The fixture's API change: 3 to 4 at API.at by key_1, request req-1.
    expect(entry).toEqual(aHistoryEntry({ petId: '1', at: API.at }));
  });

  it('records a status change with the quantity unchanged', () => {
    const entry = historyEntryFor({
      before: anEntry({ origin: API }),
      after: anEntry({ status: 'sold', origin: IMPORT }),
      recordedAt: '2026-11-23T10:00:01.000Z',
    });
    expect(entry).toMatchObject({ previousQuantity: 3, quantity: 3, previousStatus: 'available', status: 'sold' });
  });

  it('records nothing for a write that changed neither quantity nor status (an import rewriting a row unchanged)', () => {
    const write = { before: anEntry({ origin: API }), after: anEntry({ origin: IMPORT }), recordedAt: IMPORT.at };
    expect(historyEntryFor(write)).toBeUndefined();
  });

  it('records nothing for a deleted entry', () => {
    expect(historyEntryFor({ before: anEntry({ origin: API }), recordedAt: API.at })).toBeUndefined();
  });

  it.each([
    ['left the previous origin', { before: anEntry({ origin: API }), after: anEntry({ quantity: 9, origin: API }) }],
    ['put no origin at all', { after: anEntry() }],
  ])('credits a change to unknown, at the time DynamoDB recorded it, when the writer %s', (_, write) => {
    const entry = historyEntryFor({ ...write, recordedAt: '2026-11-23T11:00:00.000Z' });
    expect(entry).toMatchObject({ source: 'unknown', actor: 'unknown', at: '2026-11-23T11:00:00.000Z' });
    expect(entry).not.toHaveProperty('requestId');
  });

  it("records the writer's reason and reference, and neither when it gave none", () => {
    const noted = historyEntryFor({
      before: anEntry({ origin: IMPORT }),
      after: anEntry({ quantity: 4, origin: { ...API, reason: 'received', reference: 'delivery 4411' } }),
      recordedAt: '2026-11-23T10:00:01.000Z',
    });
    const silent = historyEntryFor({
      before: anEntry({ origin: IMPORT }),
      after: anEntry({ quantity: 4, origin: API }),
      recordedAt: '2026-11-23T10:00:01.000Z',
    });
    expect(noted).toMatchObject({ reason: 'received', reference: 'delivery 4411', actor: 'key_1' });
    expect(silent).not.toHaveProperty('reason');
    expect(silent).not.toHaveProperty('reference');
  });

  it('credits a change to its writer when only the reason or reference tells it from the one before', () => {
    const sold = { ...API, reason: 'sold' as const };
    const entry = historyEntryFor({
      before: anEntry({ origin: sold }),
      after: anEntry({ quantity: 2, origin: { ...sold, reference: 'till 3' } }),
      recordedAt: '2026-11-23T10:00:01.000Z',
    });
    expect(entry).toMatchObject({ source: 'api', reason: 'sold', reference: 'till 3' });
  });
});

describe('Function: recordHistory', () => {
  it('reads the entry before and after from the stream images, and the record time from ApproximateCreationDateTime', () => {
    const write = entryWriteOf(
      aStreamRecord('101', anEntry({ origin: IMPORT }), anEntry({ quantity: 5, version: 2, origin: API })),
    );
    expect(write).toEqual({
      before: { petId: '1', quantity: 3, status: 'available', version: 1, origin: IMPORT },
      after: { petId: '1', quantity: 5, status: 'available', version: 2, origin: API },
      recordedAt: new Date(1_795_430_000 * 1000).toISOString(),
    });
  });

  // A record replayed by hand from `aws dynamodbstreams get-records` carries ISO 8601: "By default, AWS CLI version 2
  // converts all response DateTime values to ISO 8601 format"
  // (https://docs.aws.amazon.com/cli/latest/userguide/cli-usage-parameters-types.html).
  it('reads the record time from an ISO 8601 ApproximateCreationDateTime, as AWS CLI v2 prints it for a replay', () => {
    const record = aStreamRecord('102', undefined, anEntry({ origin: API }));
    (record.dynamodb as Record<string, unknown>).ApproximateCreationDateTime = '2026-11-23T12:34:56+00:00';
    expect(entryWriteOf(record).recordedAt).toBe('2026-11-23T12:34:56.000Z');
  });

  it.each([
    ['not a date', 'yesterday'],
    ['out of range', 1e300],
    ['missing', undefined],
  ])(
    'takes the time of processing when ApproximateCreationDateTime is %s, instead of failing the record',
    (_, value) => {
      const record = aStreamRecord('103', undefined, anEntry({ origin: API }));
      (record.dynamodb as Record<string, unknown>).ApproximateCreationDateTime = value;
      const before = Date.now();
      const recordedAt = Date.parse(entryWriteOf(record).recordedAt);
      expect(recordedAt).toBeGreaterThanOrEqual(before);
      expect(recordedAt).toBeLessThanOrEqual(Date.now());
    },
  );

  it('keeps an int64 petId exact from the stream image to the history row', async () => {
    const pet = '9223372036854775807';
    const { rows } = await recordBatch([aStreamRecord('7', undefined, anEntry({ petId: pet, origin: API }))]);
    expect(rows.get('7')?.petId).toBe(pet);
  });

  it('writes one row per change, keyed by its sequence number, skips unchanged rewrites and reports no failure', async () => {
    // Prepare
    const records = [
      aStreamRecord('100', undefined, anEntry({ origin: IMPORT })),
      aStreamRecord('101', anEntry({ origin: IMPORT }), anEntry({ quantity: 4, origin: API })),
      aStreamRecord('102', anEntry({ quantity: 4, origin: API }), anEntry({ quantity: 4, origin: IMPORT })),
    ];
    // Act
    const { response, rows } = await recordBatch(records);
    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    expect([...rows.keys()].sort()).toEqual(['100', '101']);
    expect(rows.get('101')).toMatchObject({ previousQuantity: 3, quantity: 4, actor: 'key_1' });
  });

  it('reports every record from the first it could not write on, so Lambda retries them in stream order', async () => {
    // Prepare
    const records = ['200', '201', '202', '203'].map((sequence, i) =>
      aStreamRecord(sequence, anEntry({ quantity: i, origin: IMPORT }), anEntry({ quantity: i + 1, origin: API })),
    );
    // Act
    const { response, rows } = await recordBatch(records, ['201']);
    // Assess
    expect(response).toEqual({
      batchItemFailures: [{ itemIdentifier: '201' }, { itemIdentifier: '202' }, { itemIdentifier: '203' }],
    });
    expect([...rows.keys()]).toEqual(['200']);
  });

  it("hands each change on with the entry's version after it, in stream order", async () => {
    const records = [
      aStreamRecord('400', undefined, anEntry({ version: 1, origin: IMPORT })),
      aStreamRecord('401', anEntry({ version: 1, origin: IMPORT }), anEntry({ quantity: 4, version: 2, origin: API })),
    ];
    const { versions } = await recordBatch(records);
    expect([...versions.entries()]).toEqual([
      ['400', 1],
      ['401', 2],
    ]);
  });

  it('reports a record whose image breaks the model instead of crashing the batch', async () => {
    const broken = aStreamRecord('300', undefined, anEntry({ origin: API }));
    if (broken.dynamodb?.NewImage) broken.dynamodb.NewImage.quantity = { S: 'lots' };
    const fine = aStreamRecord('301', undefined, anEntry({ petId: '2', origin: API }));
    const { response, rows } = await recordBatch([broken, fine]);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: '300' }] });
    expect([...rows.keys()]).toEqual(['301']);
  });
});

describe('CLI: inventory history output', () => {
  const entries: HistoryEntry[] = [importCreation('9223372036854775807'), aHistoryEntry({ at: API.at })];

  it('writes each entry as JSON with petId as its exact digits and null where nothing came before', () => {
    expect(historyEntryJson(entries[0] as HistoryEntry)).toBe(
      '{"petId":9223372036854775807,"at":"2026-11-23T09:00:00.000Z","previousQuantity":null,"quantity":3,' +
        '"previousStatus":null,"status":"available","source":"import","actor":"import stock.csv by ops@host run 1"}',
    );
    expect(JSON.parse(historyEntryJson(entries[1] as HistoryEntry))).toMatchObject({ requestId: 'req-1' });
  });

  it('aligns a table with "-" where the entry was created, and blanks where a change gave no reason or reference', () => {
    const lines = historyTableText(entries).trimEnd().split('\n');
    expect(lines[0]).toMatch(/^at\s+quantity\s+status\s+reason\s+source\s+actor\s+requestId\s+reference$/);
    expect(lines[1]).toMatch(/^2026-11-23T09:00:00\.000Z\s+- -> 3\s+- -> available\s+import\s+import stock\.csv/);
    expect(lines[2]).toMatch(/3 -> 4\s+available -> available\s+api\s+key_1\s+req-1$/);
  });

  it("shows a change's reason and reference, in the table and as JSON members", () => {
    const noted = aHistoryEntry({ at: API.at, reason: 'received', reference: 'delivery 4411' });
    const lines = historyTableText([noted]).trimEnd().split('\n');
    expect(lines[1]).toMatch(/available -> available\s+received\s+api\s+key_1\s+req-1\s+delivery 4411$/);
    expect(JSON.parse(historyEntryJson(noted))).toMatchObject({ reason: 'received', reference: 'delivery 4411' });
  });

  it.each([
    ['2026-11-01', '2026-11-01T00:00:00.000Z'],
    ['2026-11-01T09:30Z', '2026-11-01T09:30:00.000Z'],
    ['2026-11-01T09:30:15.5+02:00', '2026-11-01T07:30:15.500Z'],
  ])('reads --since %p as %p (UTC)', (raw, iso) => {
    expect(parseSince(raw)).toBe(iso);
  });

  it.each(['yesterday', '2026-11-01T09:30:00', '2026-13-01', '1700000000'])('refuses --since %p', (raw) => {
    expect(() => parseSince(raw)).toThrow(UsageError);
  });
});
