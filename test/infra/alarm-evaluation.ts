/**
 * What CloudWatch does with a metric alarm of a synthesized template, offline: the tests feed it a run of periods
 * (each metric's value, or nothing when the metric sent no data point) and read the states the alarm goes through,
 * so they can ask whether an alarm fires and recovers, not only what its properties hold. It follows:
 * - "Configuring how CloudWatch alarms treat missing data", "How alarm state is evaluated when data is missing"
 *   (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarms-and-missing-data.html): CloudWatch reads an
 *   evaluation range longer than EvaluationPeriods (N). When the range holds at least N real data points, the most
 *   recent N real ones decide (ALARM when DatapointsToAlarm of them breach) and TreatMissingData plays no part; with
 *   fewer, every real one counts and missing ones make up the N, as few as possible: `notBreaching` as good,
 *   `breaching` as bad; `ignore` keeps the current state; `missing` goes to INSUFFICIENT_DATA when the range holds no
 *   real data point.
 * - PutMetricAlarm, TreatMissingData
 *   (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html): "Alarms that evaluate
 *   metrics in the AWS/DynamoDB namespace always ignore missing data even if you choose a different option for
 *   TreatMissingData … remain in their current state." Taken here for any alarm that reads an AWS/DynamoDB metric.
 * - "Metric math syntax and functions"
 *   (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/using-metric-math.html): an expression has no value
 *   where a metric it reads bare has no data point; FILL(m, v) gives v there; PERIOD(m) is the period in seconds;
 *   IF(condition, a, b); MAX of an array of time series "returns a time series that consists of the highest value
 *   for each data point". Only what these stacks use is understood: anything else throws, so a new kind of alarm
 *   cannot be judged by a guess.
 *
 * Not published, so chosen and stated: how long the evaluation range is (its length depends on the period; the
 * guide's examples show N + 2 periods for N = 3, the default here); and what `missing` does with fewer than N real
 * data points but more than none (not modelled: it throws; these stacks never use `missing`). FILL is taken at its
 * word for a metric with no data point in the whole range.
 */

/** One alarm's state, as CloudWatch reports it. */
export type AlarmState = 'OK' | 'ALARM' | 'INSUFFICIENT_DATA';

/** A period's data: each metric query id's value, absent when that metric sent no data point in the period. */
export type PeriodData = Readonly<Record<string, number | undefined>>;

/**
 * Data sent late: stamped in period `stamped` (an index of the run), it reaches CloudWatch in period `arrives`, and
 * the evaluation then takes it in that older period, as Lambda's metrics of a long invocation come ("Working with
 * Lambda function metrics": stamped at the invocation's start, sent at its end). In a period that already holds a
 * point, the two are one period's statistic (Sum adds, Maximum keeps the larger).
 */
export interface LateData {
  stamped: number;
  arrives: number;
  data: PeriodData;
}

/** An alarm as CloudWatch evaluates it. */
export interface EvaluatedAlarm {
  /** The ids of the metrics it reads (a plain single-metric alarm reads one, named `m`). */
  metricIds: readonly string[];
  /** Namespaces of the metrics it reads. */
  namespaces: readonly string[];
  evaluationPeriods: number;
  datapointsToAlarm: number;
  threshold: number;
  comparisonOperator: string;
  treatMissingData: string;
  /** The alarm's value in one period: the metric, or the expression over the metrics; undefined when missing. */
  value(period: PeriodData): number | undefined;
  /** Periods CloudWatch reads at each evaluation: evaluationPeriods + 2 (see above). */
  evaluationRange: number;
  /** A run of periods with no data point, as long as the evaluation range: what the alarm sees once all is quiet. */
  quiet(): PeriodData[];
  /**
   * The states after each period, starting from `initial` (INSUFFICIENT_DATA, as a new alarm); `late` data is taken
   * into its stamped period from the evaluation of the period it arrives in.
   */
  run(periods: readonly PeriodData[], initial?: AlarmState, late?: readonly LateData[]): AlarmState[];
}

type MetricQuery = {
  Id: string;
  Expression?: string;
  ReturnData?: boolean;
  Period?: number;
  MetricStat?: { Metric: { Namespace: string }; Period: number; Stat: string };
};

/** Reads an `AWS::CloudWatch::Alarm` resource's properties. */
export function evaluatedAlarm(properties: Record<string, unknown>): EvaluatedAlarm {
  const queries = properties.Metrics as MetricQuery[] | undefined;
  let metricIds: string[];
  let namespaces: string[];
  let value: (period: PeriodData) => number | undefined;
  let statistics: Record<string, string>;
  if (!queries) {
    metricIds = ['m'];
    statistics = { m: properties.Statistic as string };
    namespaces = [properties.Namespace as string];
    value = (period) => period.m;
  } else {
    const metrics = queries.filter((query) => query.MetricStat);
    metricIds = metrics.map((query) => query.Id);
    statistics = Object.fromEntries(metrics.map((query) => [query.Id, query.MetricStat?.Stat as string]));
    namespaces = [...new Set(metrics.map((query) => query.MetricStat?.Metric.Namespace as string))];
    const returned = queries.filter((query) => query.ReturnData !== false);
    if (returned.length !== 1) throw new Error(`an alarm returns one query; this one returns ${returned.length}`);
    const [answer] = returned as [MetricQuery];
    if (answer.Expression === undefined) value = (period) => period[answer.Id];
    else {
      const expression = parseExpression(answer.Expression);
      const seconds = (id: string) => {
        const query = metrics.find((candidate) => candidate.Id === id);
        if (!query?.MetricStat) throw new Error(`PERIOD(${id}): no metric ${id}`);
        return query.MetricStat.Period;
      };
      value = (period) => evaluate(expression, period, seconds);
    }
  }
  const evaluationPeriods = properties.EvaluationPeriods as number;
  const alarm = {
    metricIds,
    namespaces,
    evaluationPeriods,
    datapointsToAlarm: (properties.DatapointsToAlarm as number | undefined) ?? evaluationPeriods,
    threshold: properties.Threshold as number,
    comparisonOperator: properties.ComparisonOperator as string,
    treatMissingData: (properties.TreatMissingData as string | undefined) ?? 'missing',
    evaluationRange: evaluationPeriods + 2,
    value,
  };
  return {
    ...alarm,
    quiet: () => Array.from({ length: alarm.evaluationRange }, () => ({})),
    run: (periods, initial = 'INSUFFICIENT_DATA', late = []) =>
      runAlarm(alarm, withLateData(periods, late, statistics), initial),
  };
}

function breaches(alarm: Pick<EvaluatedAlarm, 'comparisonOperator' | 'threshold'>, value: number): boolean {
  switch (alarm.comparisonOperator) {
    case 'GreaterThanOrEqualToThreshold':
      return value >= alarm.threshold;
    case 'GreaterThanThreshold':
      return value > alarm.threshold;
    case 'LessThanThreshold':
      return value < alarm.threshold;
    case 'LessThanOrEqualToThreshold':
      return value <= alarm.threshold;
    default:
      throw new Error(`comparison ${alarm.comparisonOperator} is not understood`);
  }
}

/** The data each evaluation sees: for each period of the run, every period up to it with what had arrived by then. */
function withLateData(
  periods: readonly PeriodData[],
  late: readonly LateData[],
  statistics: Readonly<Record<string, string>>,
): PeriodData[][] {
  const combine = (id: string, a: number | undefined, b: number | undefined) => {
    if (a === undefined || b === undefined) return a ?? b;
    if (statistics[id] === 'Sum') return a + b;
    if (statistics[id] === 'Maximum') return Math.max(a, b);
    throw new Error(`late data for ${id} (${statistics[id]}) in a period with data is not understood`);
  };
  const seen: Record<string, number | undefined>[] = [];
  return periods.map((period, now) => {
    seen.push({ ...period });
    for (const { stamped, arrives, data } of late.filter((point) => point.arrives === now)) {
      const target = seen[stamped];
      if (!target || stamped > arrives) throw new Error(`late data stamped ${stamped} cannot arrive at ${arrives}`);
      for (const [id, value] of Object.entries(data)) target[id] = combine(id, target[id], value);
    }
    return seen.map((data) => ({ ...data }));
  });
}

function runAlarm(
  alarm: Omit<EvaluatedAlarm, 'run' | 'quiet'>,
  evaluations: readonly (readonly PeriodData[])[],
  initial: AlarmState,
): AlarmState[] {
  const treatment = alarm.namespaces.includes('AWS/DynamoDB') ? 'ignore' : alarm.treatMissingData;
  const n = alarm.evaluationPeriods;
  const m = alarm.datapointsToAlarm;
  const states: AlarmState[] = [];
  let state = initial;
  for (const seen of evaluations) {
    const real = seen
      .slice(-alarm.evaluationRange)
      .map(alarm.value)
      .filter((value): value is number => value !== undefined);
    const bad = (points: readonly number[]) => points.filter((value) => breaches(alarm, value)).length;
    if (real.length >= n) {
      // Enough real data points: the most recent N decide; missing data plays no part.
      state = bad(real.slice(-n)) >= m ? 'ALARM' : 'OK';
    } else if (treatment === 'notBreaching' || treatment === 'breaching') {
      // Every real point counts; as few missing ones as make up N are good (notBreaching) or bad (breaching).
      const filled = treatment === 'breaching' ? n - real.length : 0;
      state = bad(real) + filled >= m ? 'ALARM' : 'OK';
    } else if (treatment === 'ignore') {
      // The current state is kept.
    } else if (treatment === 'missing' && real.length === 0) {
      state = 'INSUFFICIENT_DATA';
    } else throw new Error(`TreatMissingData ${treatment} with ${real.length} of ${n} real points is not understood`);
    states.push(state);
  }
  return states;
}

type Node =
  | { kind: 'number'; value: number }
  | { kind: 'metric'; id: string }
  | { kind: 'call'; name: string; args: Node[] }
  | { kind: 'array'; items: Node[] }
  | { kind: 'binary'; operator: string; left: Node; right: Node };

const TOKEN = /\s*(?:(\d+(?:\.\d+)?)|([A-Za-z_]\w*)|(>=|<=|==|!=|[-+*/(),<>[\]]))/y;

/** Parses the metric math these stacks write: numbers, metric ids, + - * /, comparisons, FILL, PERIOD, IF, MAX([…]). */
function parseExpression(source: string): Node {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < source.trimEnd().length) {
    const at = TOKEN.lastIndex;
    const match = TOKEN.exec(source);
    if (!match) throw new Error(`metric math not understood at ${at}: ${source}`);
    tokens.push((match[1] ?? match[2] ?? match[3]) as string);
  }
  let next = 0;
  const peek = () => tokens[next];
  const take = (expected?: string) => {
    const token = tokens[next++];
    if (token === undefined || (expected !== undefined && token !== expected))
      throw new Error(`metric math not understood: expected ${expected ?? 'more'} at token ${next - 1} of ${source}`);
    return token;
  };
  const binary = (operators: readonly string[], operand: () => Node) => (): Node => {
    let left = operand();
    while (operators.includes(peek() ?? '')) {
      const operator = take();
      left = { kind: 'binary', operator, left, right: operand() };
    }
    return left;
  };
  const primary = (): Node => {
    const token = take();
    if (token === '(') {
      const inner = comparison();
      take(')');
      return inner;
    }
    if (token === '[') {
      const items = [comparison()];
      while (peek() === ',') {
        take(',');
        items.push(comparison());
      }
      take(']');
      return { kind: 'array', items };
    }
    if (token === '-') return { kind: 'binary', operator: '-', left: { kind: 'number', value: 0 }, right: primary() };
    if (/^\d/.test(token)) return { kind: 'number', value: Number(token) };
    if (peek() === '(') {
      take('(');
      const args = [comparison()];
      while (peek() === ',') {
        take(',');
        args.push(comparison());
      }
      take(')');
      return { kind: 'call', name: token, args };
    }
    return { kind: 'metric', id: token };
  };
  const product = binary(['*', '/'], primary);
  const sum = binary(['+', '-'], product);
  const comparison = binary(['>=', '<=', '==', '!=', '>', '<'], sum);
  const tree = comparison();
  if (next !== tokens.length) throw new Error(`metric math not understood: trailing tokens in ${source}`);
  return tree;
}

function evaluate(node: Node, period: PeriodData, seconds: (id: string) => number): number | undefined {
  const of = (child: Node) => evaluate(child, period, seconds);
  switch (node.kind) {
    case 'number':
      return node.value;
    case 'metric':
      return period[node.id];
    case 'call': {
      const [first, second, third] = node.args;
      if (node.name === 'FILL' && first?.kind === 'metric' && second?.kind === 'number' && node.args.length === 2)
        return period[first.id] ?? second.value;
      if (node.name === 'PERIOD' && first?.kind === 'metric' && node.args.length === 1) return seconds(first.id);
      // MAX of an array of series: a series of each period's largest value. A member with no value in the period is
      // left out (chosen: the stacks fill every member, so it never happens in them).
      if (node.name === 'MAX' && first?.kind === 'array' && node.args.length === 1) {
        const values = first.items.map(of).filter((value): value is number => value !== undefined);
        return values.length === 0 ? undefined : Math.max(...values);
      }
      if (node.name === 'IF' && first && second && third && node.args.length === 3) {
        const condition = of(first);
        if (condition === undefined) return undefined;
        return condition !== 0 ? of(second) : of(third);
      }
      throw new Error(`metric math function ${node.name}/${node.args.length} is not understood`);
    }
    case 'array':
      throw new Error('metric math: an array is understood only as the argument of MAX');
    case 'binary': {
      const left = of(node.left);
      const right = of(node.right);
      if (left === undefined || right === undefined) return undefined;
      switch (node.operator) {
        case '+':
          return left + right;
        case '-':
          return left - right;
        case '*':
          return left * right;
        case '/':
          // A division by zero has no value (CloudWatch drops it from the series).
          return right === 0 ? undefined : left / right;
        case '>=':
          return Number(left >= right);
        case '<=':
          return Number(left <= right);
        case '>':
          return Number(left > right);
        case '<':
          return Number(left < right);
        case '==':
          return Number(left === right);
        case '!=':
          return Number(left !== right);
        default:
          throw new Error(`metric math operator ${node.operator} is not understood`);
      }
    }
  }
}
