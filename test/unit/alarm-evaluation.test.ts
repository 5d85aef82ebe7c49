import { evaluatedAlarm } from '../infra/alarm-evaluation';

/** An alarm's properties as a synthesized template holds them, on one plain metric. */
function plainAlarm(overrides: Record<string, unknown> = {}) {
  return evaluatedAlarm({
    Namespace: 'PetStoreInventory',
    MetricName: 'Failures',
    Statistic: 'Sum',
    Period: 60,
    EvaluationPeriods: 3,
    DatapointsToAlarm: 2,
    Threshold: 1,
    ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    TreatMissingData: 'notBreaching',
    ...overrides,
  });
}

/** An alarm on a metric-math expression over the given metrics (id → namespace). */
function mathAlarm(expression: string, metrics: Record<string, string>, overrides: Record<string, unknown> = {}) {
  return evaluatedAlarm({
    Metrics: [
      { Id: 'expr_1', Expression: expression, ReturnData: true },
      ...Object.entries(metrics).map(([Id, Namespace]) => ({
        Id,
        ReturnData: false,
        MetricStat: { Metric: { Namespace, MetricName: Id, Dimensions: [] }, Period: 300, Stat: 'Sum' },
      })),
    ],
    EvaluationPeriods: 1,
    DatapointsToAlarm: 1,
    Threshold: 1,
    ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    TreatMissingData: 'notBreaching',
    ...overrides,
  });
}

const bad = { m: 1 };
const good = { m: 0 };

/** A run written as the guide writes it, oldest first: `0` a good data point, `X` a breaching one, `-` none. */
const periods = (written: string) =>
  written.split(' ').map((point) => (point === '-' ? {} : point === 'X' ? bad : good));

describe('alarm evaluation as CloudWatch documents it (alarms-and-missing-data, PutMetricAlarm, metric math)', () => {
  /**
   * The guide's examples ("How alarm state is evaluated when data is missing"): an evaluation range of 5 periods,
   * oldest first. With N real data points in it the most recent N decide whatever TreatMissingData says; with fewer,
   * every real one counts and missing ones fill up to N.
   */
  it.each([
    [3, 3, '0 - X - X', { notBreaching: 'OK', breaching: 'OK' }],
    [3, 3, '0 X X - X', { notBreaching: 'ALARM', breaching: 'ALARM' }],
    [3, 3, '0 - - - -', { notBreaching: 'OK', breaching: 'OK' }],
    [3, 3, '- - X - -', { notBreaching: 'OK', breaching: 'ALARM' }],
    [2, 3, '0 - X - X', { notBreaching: 'ALARM', breaching: 'ALARM' }],
    [2, 3, '0 - X - -', { notBreaching: 'OK', breaching: 'ALARM' }],
    [2, 3, '- - - X -', { notBreaching: 'OK', breaching: 'ALARM' }],
    [2, 3, '- - - - 0', { notBreaching: 'OK', breaching: 'ALARM' }],
  ] as const)('%i of %i on `%s` (oldest first): %o', (m, n, written, expected) => {
    for (const [treatment, state] of Object.entries(expected)) {
      const alarm = plainAlarm({ EvaluationPeriods: n, DatapointsToAlarm: m, TreatMissingData: treatment });
      expect({ treatment, state: alarm.run(periods(written), 'OK').at(-1) }).toEqual({ treatment, state });
    }
  });

  it('goes to ALARM when DatapointsToAlarm of the last EvaluationPeriods data points breach, and not on fewer', () => {
    const states = plainAlarm().run(periods('X 0 0 X 0 X 0 0'));
    expect(states).toEqual([...Array(5).fill('OK'), 'ALARM', 'OK', 'OK']);
  });

  it('keeps a lone breach in the evaluation range: a 1-of-1 alarm stays in ALARM until it has left', () => {
    const once = plainAlarm({ EvaluationPeriods: 1, DatapointsToAlarm: 1 });
    expect(once.evaluationRange).toBe(3);
    expect(once.run([bad, {}, {}, {}, {}], 'OK')).toEqual(['ALARM', 'ALARM', 'ALARM', 'OK', 'OK']);
    expect(once.run([bad, good], 'OK')).toEqual(['ALARM', 'OK']);
  });

  it('takes late data into the period it was stamped in, from the evaluation of the period it arrives in', () => {
    // A point stamped in period 0 that arrives in period 14, every period between holding a good point.
    const busy = Array.from({ length: 16 }, () => good);
    const late = [{ stamped: 0, arrives: 14, data: bad }];
    const once = plainAlarm({ EvaluationPeriods: 1, DatapointsToAlarm: 1 });
    expect(once.run(busy, 'OK', late)).toEqual(Array(16).fill('OK'));
    const reaching = plainAlarm({ EvaluationPeriods: 15, DatapointsToAlarm: 1 });
    const states = reaching.run(busy, 'OK', late);
    expect(states.slice(0, 14)).toEqual(Array(14).fill('OK'));
    expect(states[14]).toBe('ALARM');
    // In a period that has its own point, a late Sum adds to it.
    const two = plainAlarm({ Threshold: 2, EvaluationPeriods: 1, DatapointsToAlarm: 1 });
    expect(two.run([bad, {}], 'OK', [{ stamped: 0, arrives: 1, data: bad }])).toEqual(['OK', 'ALARM']);
  });

  it('keeps its state with ignore while too few real points are there, and goes to INSUFFICIENT_DATA with missing when none are', () => {
    const run = periods('X X X - - - - -');
    expect(plainAlarm({ TreatMissingData: 'ignore' }).run(run).at(-1)).toBe('ALARM');
    expect(plainAlarm({ TreatMissingData: 'missing' }).run(periods('- - -'), 'OK')).toEqual(
      Array(3).fill('INSUFFICIENT_DATA'),
    );
    expect(() => plainAlarm({ TreatMissingData: 'missing' }).run(periods('X - - -'))).toThrow(/not understood/);
  });

  it('keeps the state of an alarm on a plain AWS/DynamoDB metric while it is missing, whatever TreatMissingData says', () => {
    const onDynamoDb = plainAlarm({ Namespace: 'AWS/DynamoDB', MetricName: 'ReadThrottleEvents' });
    const burstThenQuiet = periods('X X X - - - - - - -');
    expect(onDynamoDb.run(burstThenQuiet, 'OK').at(-1)).toBe('ALARM');
    expect(plainAlarm().run(burstThenQuiet, 'OK').at(-1)).toBe('OK');
  });

  it('gives FILL(m, v) the value v where m sent nothing, so an expression over DynamoDB metrics recovers', () => {
    const filled = mathAlarm('FILL(reads, 0) + FILL(writes, 0)', { reads: 'AWS/DynamoDB', writes: 'AWS/DynamoDB' });
    expect(filled.value({ reads: 2 })).toBe(2);
    expect(filled.value({})).toBe(0);
    expect(filled.run([{ writes: 3 }, {}])).toEqual(['ALARM', 'OK']);
    const bare = mathAlarm('reads + FILL(writes, 0)', { reads: 'AWS/DynamoDB', writes: 'AWS/DynamoDB' });
    expect(bare.value({ writes: 3 })).toBeUndefined();
    expect(bare.run([{ reads: 1 }, { writes: 3 }])).toEqual(['ALARM', 'ALARM']);
  });

  it('reads PERIOD(m) as the period in seconds, IF as a choice, and a division by zero as no value', () => {
    expect(
      mathAlarm('FILL(consumed, 0) / PERIOD(consumed)', { consumed: 'AWS/DynamoDB' }).value({ consumed: 600 }),
    ).toBe(2);
    const rate = mathAlarm('IF(FILL(requests, 0) >= 20, FILL(errors, 0) / FILL(requests, 0), 0)', {
      requests: 'AWS/ApiGateway',
      errors: 'AWS/ApiGateway',
    });
    expect(rate.value({ requests: 40, errors: 10 })).toBe(0.25);
    expect(rate.value({ requests: 19, errors: 19 })).toBe(0);
    expect(
      mathAlarm('errors / requests', { requests: 'X', errors: 'X' }).value({ requests: 0, errors: 1 }),
    ).toBeUndefined();
  });

  it('refuses metric math it does not understand rather than guess', () => {
    expect(() => mathAlarm('SUM(METRICS())', { m1: 'X' }).value({})).toThrow(/not understood/);
    expect(() => mathAlarm('m1 ^ 2', { m1: 'X' })).toThrow(/not understood/);
  });
});
