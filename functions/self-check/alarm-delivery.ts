import { paginateListSubscriptionsByTopic, type SNSClient } from '@aws-sdk/client-sns';
import { SelfCheckFailedError } from './self-check';

/** What ListSubscriptionsByTopic says a subscription's ARN is until its endpoint confirms it. */
export const PENDING_CONFIRMATION = 'PendingConfirmation';

/** One subscription of the alarm topic, as ListSubscriptionsByTopic gives it (never its endpoint: an address). */
export interface AlarmSubscription {
  /** Its ARN once confirmed; {@link PENDING_CONFIRMATION} until its endpoint confirms it. */
  subscriptionArn: string;
  /** `email`, `sqs`, `https`, … */
  protocol: string;
}

/** What the alarm-delivery check needs. */
export interface AlarmDeliveryOptions {
  /** The stage's alarm topic, where every alarm publishes. */
  topicArn: string;
  /** The alarms also publish to a configured on-call topic (a team's: this check cannot read its subscriptions). */
  onCallTopic: boolean;
  /** Nobody notified fails the self-check (production, whose synth already requires an alarm destination). */
  required: boolean;
  /** Every subscription of a topic, all pages. */
  listSubscriptions: (topicArn: string) => Promise<AlarmSubscription[]>;
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
 * Whether the stage's alarms reach anyone, as SNS says after this deployment. An alarm publishes to the topic, and
 * the topic delivers only to confirmed subscriptions (SNS Developer Guide, "Confirming the subscription"); an e-mail
 * subscription left unconfirmed is deleted by SNS after 48 hours, and the unsubscribe link of any alarm e-mail
 * deletes a confirmed one ("Deleting an Amazon SNS subscription and topic"). CloudFormation knows of neither, so no
 * later deploy brings the subscription back, and synth-time checks cannot see it.
 *
 * - A confirmed subscription, or a configured on-call topic: passes.
 * - Only subscriptions awaiting confirmation (a first deploy's e-mail): passes with a warning.
 * - None at all: fails where the stage must page someone (`required`), warns elsewhere.
 *
 * The topic's subscriptions failing to list fails where `required` (nothing else would notice), warns elsewhere.
 */
export async function checkAlarmDelivery(options: AlarmDeliveryOptions): Promise<AlarmDeliveryResult> {
  let subscriptions: AlarmSubscription[];
  try {
    subscriptions = await options.listSubscriptions(options.topicArn);
  } catch (error) {
    const problem = `could not list the subscriptions of the alarm topic ${options.topicArn}: ${(error as Error).name}`;
    if (options.required) throw new SelfCheckFailedError(`Alarm delivery: ${problem}`, { cause: error });
    return { confirmed: 0, pending: 0, warning: problem };
  }
  const pending = subscriptions.filter((s) => s.subscriptionArn === PENDING_CONFIRMATION).length;
  const confirmed = subscriptions.filter((s) => s.subscriptionArn.startsWith('arn:')).length;
  if (confirmed > 0 || options.onCallTopic) return { confirmed, pending };
  if (pending > 0)
    return {
      confirmed,
      pending,
      warning:
        `alarms reach no one until the subscription e-mail SNS sent for ${options.topicArn} is confirmed ` +
        '(its link); SNS deletes an unconfirmed subscription after 48 hours, and no later deploy recreates it',
    };
  const problem =
    `alarms reach no one: the alarm topic ${options.topicArn} has no subscription (SNS deletes an e-mail ` +
    'subscription not confirmed within 48 hours, and the unsubscribe link of an alarm e-mail deletes it; a deploy ' +
    'does not recreate it). Subscribe again with `aws sns subscribe --topic-arn <AlarmTopicArn> --protocol email ' +
    '--notification-endpoint <address>`, confirm the e-mail, and deploy again (docs/deploying.md, "Alarm delivery")';
  if (options.required) throw new SelfCheckFailedError(`Alarm delivery: ${problem}`);
  return { confirmed, pending, warning: problem };
}

/** Lists a topic's subscriptions through SNS, every page (at most 100 each). */
export function snsSubscriptionLister(client: SNSClient): AlarmDeliveryOptions['listSubscriptions'] {
  return async (topicArn) => {
    const subscriptions: AlarmSubscription[] = [];
    for await (const page of paginateListSubscriptionsByTopic({ client }, { TopicArn: topicArn }))
      for (const subscription of page.Subscriptions ?? [])
        subscriptions.push({
          subscriptionArn: subscription.SubscriptionArn ?? '',
          protocol: subscription.Protocol ?? '',
        });
    return subscriptions;
  };
}
