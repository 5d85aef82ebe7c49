import { setTimeout as sleep } from 'node:timers/promises';
import { paginateListSubscriptionsByTopic, SNSClient } from '@aws-sdk/client-sns';
import { DEPLOY_CLIENT_BOUNDS, isRollingBack, NOT_FAILED_WHILE_ROLLING_BACK } from '../deploy/stack-status';
import { tracer } from '../observability/tracer';
import { SelfCheckFailedError } from './self-check';

/** What ListSubscriptionsByTopic says a subscription's ARN is until its endpoint confirms it. */
export const PENDING_CONFIRMATION = 'PendingConfirmation';

/** How often the subscriptions are listed before "no subscription" fails a deploy, and the pause between lists. */
const ALARM_DELIVERY_ATTEMPTS = 3;
const ALARM_DELIVERY_RETRY_DELAY_MS = 10_000;

/** A subscription's ARN as ListSubscriptionsByTopic gives it, or {@link PENDING_CONFIRMATION} (never its endpoint). */
export type AlarmSubscription = string;

export interface AlarmDeliveryOptions {
  /** The stage's alarm topic, where every alarm publishes. */
  topicArn: string;
  /** The alarms also publish to a configured on-call topic (a team's: this check cannot read its subscriptions). */
  onCallTopic: boolean;
  /** Nobody notified fails the self-check (production, whose synth already requires an alarm destination). */
  required: boolean;
  /** Every subscription of a topic, all pages. */
  listSubscriptions: (topicArn: string) => Promise<AlarmSubscription[]>;
  /** Whether CloudFormation is rolling the stack back: then a failure only warns. @default never */
  rollingBack?: () => Promise<boolean>;
  /** @default {@link ALARM_DELIVERY_RETRY_DELAY_MS} */
  retryDelayMs?: number;
}

/** What the check found, when it passes. */
export interface AlarmDeliveryResult {
  /** Subscriptions of the alarm topic with a real ARN: they receive every alarm. */
  confirmed: number;
  /** Subscriptions SNS still waits on: they receive nothing until confirmed, and SNS deletes them after 48 hours. */
  pending: number;
  /** Set when alarms may reach no one but the deploy goes on (a first deploy's unconfirmed e-mail; staging). */
  warning?: string;
}

/**
 * Whether the stage's alarms reach anyone, as SNS says (CloudFormation cannot see a deleted subscription); what each
 * case passes, warns or fails: docs/deploying.md, "Alarm delivery".
 */
export async function checkAlarmDelivery(options: AlarmDeliveryOptions): Promise<AlarmDeliveryResult> {
  // Only an outcome that would fail the deploy is worth waiting on.
  const attempts = options.required ? ALARM_DELIVERY_ATTEMPTS : 1;
  let found: { confirmed: number; pending: number } | undefined;
  let problem = '';
  let cause: unknown;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    if (attempt > 1) await sleep(options.retryDelayMs ?? ALARM_DELIVERY_RETRY_DELAY_MS);
    try {
      const subscriptions = await options.listSubscriptions(options.topicArn);
      cause = undefined;
      found = {
        confirmed: subscriptions.filter((arn) => arn.startsWith('arn:')).length,
        pending: subscriptions.filter((arn) => arn === PENDING_CONFIRMATION).length,
      };
      if (found.confirmed > 0 || options.onCallTopic) return found;
      if (found.pending > 0)
        return {
          ...found,
          warning:
            `alarms reach no one until the subscription e-mail SNS sent for ${options.topicArn} is confirmed ` +
            '(its link); SNS deletes an unconfirmed subscription after 48 hours, and no later deploy recreates it',
        };
      problem =
        `alarms reach no one: the alarm topic ${options.topicArn} has no subscription (SNS deletes an e-mail ` +
        'subscription not confirmed within 48 hours, and the unsubscribe link of an alarm e-mail deletes it; a ' +
        `deploy does not recreate it). Subscribe again with \`aws sns subscribe --topic-arn ${options.topicArn} ` +
        '--protocol email --notification-endpoint <address>`, confirm the e-mail, and deploy again ' +
        '(docs/deploying.md, "Alarm delivery")';
    } catch (error) {
      found = undefined;
      cause = error;
      problem = `could not list the subscriptions of the alarm topic ${options.topicArn}: ${(error as Error).name}`;
    }
  }
  const counts = found ?? { confirmed: 0, pending: 0 };
  if (!options.required) return { ...counts, warning: problem };
  if (await isRollingBack(options.rollingBack))
    return { ...counts, warning: `${problem} ${NOT_FAILED_WHILE_ROLLING_BACK}` };
  throw new SelfCheckFailedError(`Alarm delivery: ${problem}`, cause === undefined ? undefined : { cause });
}

/** Lists a topic's subscriptions through SNS, every page (at most 100 each). */
export function snsSubscriptionLister(
  client: SNSClient = tracer.captureAWSv3Client(new SNSClient(DEPLOY_CLIENT_BOUNDS)),
): AlarmDeliveryOptions['listSubscriptions'] {
  return async (topicArn) => {
    const subscriptions: AlarmSubscription[] = [];
    for await (const page of paginateListSubscriptionsByTopic({ client }, { TopicArn: topicArn }))
      for (const subscription of page.Subscriptions ?? []) subscriptions.push(subscription.SubscriptionArn ?? '');
    return subscriptions;
  };
}
