import type { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, TableEncryption, type TableProps } from 'aws-cdk-lib/aws-dynamodb';

/** The CDK attribute type of a key attribute as service/names.ts declares it (`N` or `S`). */
export function attributeType(type: 'N' | 'S'): AttributeType {
  return type === 'N' ? AttributeType.NUMBER : AttributeType.STRING;
}

/**
 * What every table of the stack shares: on-demand billing, point-in-time recovery, AWS-managed encryption, and the
 * stage's deletion protection and removal policy (production keeps its data, staging does not).
 */
export function tableDefaults(stateful: {
  removalPolicy: RemovalPolicy;
  deletionProtection: boolean;
}): Pick<
  TableProps,
  'billingMode' | 'pointInTimeRecoverySpecification' | 'encryption' | 'deletionProtection' | 'removalPolicy'
> {
  return {
    billingMode: BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    encryption: TableEncryption.AWS_MANAGED,
    deletionProtection: stateful.deletionProtection,
    removalPolicy: stateful.removalPolicy,
  };
}
