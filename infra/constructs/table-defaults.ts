import type { RemovalPolicy } from 'aws-cdk-lib';
import { type Attribute, AttributeType, BillingMode, TableEncryption, type TableProps } from 'aws-cdk-lib/aws-dynamodb';

/** A key attribute as service/names.ts declares it. */
export function keyAttribute(key: { name: string; type: 'N' | 'S' }): Attribute {
  return { name: key.name, type: key.type === 'N' ? AttributeType.NUMBER : AttributeType.STRING };
}

/**
 * What every table shares: on-demand billing, point-in-time recovery, AWS-managed encryption, and the stage's
 * deletion protection and removal policy (production keeps its data, staging does not).
 */
export function tableDefaults(stateful: {
  removalPolicy: RemovalPolicy;
  deletionProtection: boolean;
}): Omit<TableProps, 'partitionKey'> {
  return {
    billingMode: BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    encryption: TableEncryption.AWS_MANAGED,
    deletionProtection: stateful.deletionProtection,
    removalPolicy: stateful.removalPolicy,
  };
}
