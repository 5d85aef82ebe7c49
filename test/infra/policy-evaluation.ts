import { createHash } from 'node:crypto';
import {
  type EvaluationResult,
  runSimulation,
  runUnsafeSimulation,
  type Simulation,
} from '@cloud-copilot/iam-simulate';
import type { Template } from 'aws-cdk-lib/assertions';

/**
 * Policy evaluation over synthesized templates: CloudFormation intrinsics resolved to the concrete names and ARNs
 * CloudFormation would give the resources, and requests evaluated by @cloud-copilot/iam-simulate (an offline
 * implementation of IAM's policy evaluation logic, https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html).
 */

/** An IAM policy document. */
export interface PolicyDocument {
  Version?: string;
  Statement: Record<string, unknown>[];
}

type CfnResource = {
  Type: string;
  Properties?: Record<string, unknown>;
  UpdatePolicy?: Record<string, unknown>;
};

/**
 * Where the names come from: CloudFormation names a resource without a name property `<stack>-<logicalId>-<random>`
 * (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-properties-name.html); the random part is a
 * fixed stand-in here. IDs API Gateway and KMS choose are derived from the logical ID, so they differ per resource.
 */
const RANDOM_SUFFIX = 'A1B2C3D4E5F6';

/** A synthesized stack whose intrinsics resolve to concrete values. */
export class ResolvedStack {
  readonly resources: Record<string, CfnResource>;

  constructor(
    template: Template,
    readonly stackName: string,
    readonly account: string,
    readonly region: string,
  ) {
    this.resources = template.toJSON().Resources as Record<string, CfnResource>;
  }

  /** The resource with this logical ID; throws when there is none. */
  resource(logicalId: string): CfnResource {
    const resource = this.resources[logicalId];
    if (!resource) throw new Error(`No resource ${logicalId} in ${this.stackName}`);
    return resource;
  }

  /** Logical IDs of the resources of one type. */
  idsOfType(type: string): string[] {
    return Object.entries(this.resources)
      .filter(([, resource]) => resource.Type === type)
      .map(([id]) => id);
  }

  /** A value of the template with every intrinsic function replaced by what CloudFormation would put there. */
  resolve(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((item) => this.resolve(item));
    if (value === null || typeof value !== 'object') return value;
    const entries = Object.entries(value as Record<string, unknown>);
    const [first] = entries;
    if (entries.length === 1 && first && (first[0] === 'Ref' || first[0].startsWith('Fn::'))) {
      return this.intrinsic(first[0], first[1]);
    }
    return Object.fromEntries(entries.map(([key, item]) => [key, this.resolve(item)]));
  }

  /** {@link resolve}, for a value that must come out as a string. */
  resolveString(value: unknown): string {
    const resolved = this.resolve(value);
    if (typeof resolved !== 'string') throw new Error(`Expected a string, got ${JSON.stringify(resolved)}`);
    return resolved;
  }

  /** What `Ref` returns for the resource (per its type's "Return values" in the CloudFormation reference). */
  ref(logicalId: string): string {
    const pseudo = this.pseudoParameter(logicalId);
    if (pseudo !== undefined) return pseudo;
    const resource = this.resource(logicalId);
    const props = resource.Properties ?? {};
    switch (resource.Type) {
      case 'AWS::SNS::Topic':
        return this.getAtt(logicalId, 'TopicArn');
      case 'AWS::SQS::Queue':
        return `https://sqs.${this.region}.amazonaws.com/${this.account}/${this.physicalName(logicalId)}`;
      case 'AWS::Lambda::Alias':
        return `${this.functionArn(props.FunctionName)}:${props.Name as string}`;
      case 'AWS::Lambda::Version':
        return `${this.functionArn(props.FunctionName)}:1`;
      case 'AWS::KMS::Key':
        return this.derivedId(logicalId, 36);
      case 'AWS::ApiGateway::RestApi':
      case 'AWS::ApiGateway::Authorizer':
      case 'AWS::ApiGateway::Deployment':
      case 'AWS::ApiGateway::Resource':
        return this.derivedId(logicalId, 10);
      case 'AWS::ApiGateway::Stage':
        return props.StageName as string;
      case 'AWS::Events::EventBus':
        return props.Name as string;
      case 'AWS::SecretsManager::Secret':
        // Secrets Manager appends six random characters to a secret's name in its ARN.
        return `arn:aws:secretsmanager:${this.region}:${this.account}:secret:${this.physicalName(logicalId)}-AbC123`;
      case 'AWS::Lambda::Function':
      case 'AWS::DynamoDB::Table':
      case 'AWS::IAM::Role':
      case 'AWS::Logs::LogGroup':
      case 'AWS::CloudWatch::Alarm':
      case 'AWS::CodeDeploy::Application':
      case 'AWS::CodeDeploy::DeploymentGroup':
        return this.physicalName(logicalId);
      default:
        throw new Error(`Ref of ${resource.Type} (${logicalId}) is not modelled: add it to ResolvedStack.ref`);
    }
  }

  /** What `Fn::GetAtt` returns. */
  getAtt(logicalId: string, attribute: string): string {
    const resource = this.resource(logicalId);
    const { account, region } = this;
    const name = () => this.ref(logicalId);
    switch (`${resource.Type}.${attribute}`) {
      case 'AWS::SNS::Topic.TopicArn':
        return `arn:aws:sns:${region}:${account}:${this.physicalName(logicalId)}`;
      case 'AWS::SNS::Topic.TopicName':
      case 'AWS::SQS::Queue.QueueName':
        return this.physicalName(logicalId);
      case 'AWS::SQS::Queue.Arn':
        return `arn:aws:sqs:${region}:${account}:${this.physicalName(logicalId)}`;
      case 'AWS::KMS::Key.Arn':
        return `arn:aws:kms:${region}:${account}:key/${name()}`;
      case 'AWS::Lambda::Function.Arn':
        return `arn:aws:lambda:${region}:${account}:function:${name()}`;
      case 'AWS::DynamoDB::Table.Arn':
        return `arn:aws:dynamodb:${region}:${account}:table/${name()}`;
      case 'AWS::DynamoDB::Table.StreamArn':
        return `arn:aws:dynamodb:${region}:${account}:table/${name()}/stream/2026-01-01T00:00:00.000`;
      case 'AWS::IAM::Role.Arn':
        return `arn:aws:iam::${account}:role/${name()}`;
      case 'AWS::Logs::LogGroup.Arn':
        return `arn:aws:logs:${region}:${account}:log-group:${name()}:*`;
      case 'AWS::CloudWatch::Alarm.Arn':
        return `arn:aws:cloudwatch:${region}:${account}:alarm:${name()}`;
      case 'AWS::Events::EventBus.Arn':
        return `arn:aws:events:${region}:${account}:event-bus/${name()}`;
      case 'AWS::Events::Rule.Arn': {
        // A rule on a custom bus: `rule/<bus name>/<rule name>` (EventBridge's IAM reference).
        const bus = this.resolveString(resource.Properties?.EventBusName ?? 'default');
        return `arn:aws:events:${region}:${account}:rule/${bus}/${this.physicalName(logicalId)}`;
      }
      case 'AWS::ApiGateway::RestApi.RootResourceId':
        return this.derivedId(`${logicalId}Root`, 10);
      default:
        throw new Error(`GetAtt ${resource.Type}.${attribute} (${logicalId}) is not modelled: add it to getAtt`);
    }
  }

  /** The ARN of a function given by name, ARN or an intrinsic that yields either. */
  functionArn(nameOrArn: unknown): string {
    const resolved = this.resolveString(nameOrArn);
    return resolved.startsWith('arn:')
      ? resolved
      : `arn:aws:lambda:${this.region}:${this.account}:function:${resolved}`;
  }

  /** The deployment group ARN CodeDeploy uses for `application/group`. */
  deploymentGroupArn(application: string, group: string): string {
    return `arn:aws:codedeploy:${this.region}:${this.account}:deploymentgroup:${application}/${group}`;
  }

  /**
   * The identity policies of a role: its inline policies, the AWS::IAM::Policy and AWS::IAM::ManagedPolicy resources
   * attached to it, and its AWS managed policies (documents from {@link AWS_MANAGED_POLICIES}).
   */
  rolePolicies(roleLogicalId: string): { name: string; policy: PolicyDocument }[] {
    const role = this.resource(roleLogicalId);
    const props = role.Properties ?? {};
    const inline = ((props.Policies ?? []) as { PolicyName: string; PolicyDocument: unknown }[]).map((p) => ({
      name: p.PolicyName,
      policy: this.resolve(p.PolicyDocument) as PolicyDocument,
    }));
    const attached = ['AWS::IAM::Policy', 'AWS::IAM::ManagedPolicy'].flatMap((type) =>
      this.idsOfType(type)
        .filter((id) =>
          ((this.resource(id).Properties?.Roles ?? []) as unknown[]).some((r) => refersTo(r, roleLogicalId)),
        )
        .map((id) => ({
          name: id,
          policy: this.resolve(this.resource(id).Properties?.PolicyDocument) as PolicyDocument,
        })),
    );
    const managed = ((props.ManagedPolicyArns ?? []) as unknown[]).map((arn) => {
      const resolved = this.resolveString(arn);
      const policy = AWS_MANAGED_POLICIES[resolved];
      if (!policy) throw new Error(`No document for the managed policy ${resolved}: add it to AWS_MANAGED_POLICIES`);
      return { name: resolved, policy };
    });
    return [...inline, ...attached, ...managed];
  }

  /** The logical ID of the role a function runs as. */
  functionRole(functionLogicalId: string): string {
    const role = this.resource(functionLogicalId).Properties?.Role as { 'Fn::GetAtt': [string, string] };
    return role['Fn::GetAtt'][0];
  }

  /** The logical ID of the function whose name or ARN (with or without a qualifier) is `nameOrArn`. */
  functionByName(nameOrArn: string): string {
    const name = nameOrArn.startsWith('arn:') ? (nameOrArn.split(':')[6] as string) : nameOrArn.split(':')[0];
    const id = this.idsOfType('AWS::Lambda::Function').find((candidate) => this.ref(candidate) === name);
    if (!id) throw new Error(`No function named ${name} in ${this.stackName}`);
    return id;
  }

  private intrinsic(name: string, args: unknown): unknown {
    switch (name) {
      case 'Ref':
        return this.ref(args as string);
      case 'Fn::GetAtt': {
        const [id, attribute] = typeof args === 'string' ? args.split('.') : (args as [string, string]);
        return this.getAtt(id as string, attribute as string);
      }
      case 'Fn::Join': {
        const [separator, parts] = args as [string, unknown[]];
        return (this.resolve(parts) as unknown[]).map(String).join(separator);
      }
      case 'Fn::Select': {
        const [index, list] = args as [number | string, unknown];
        return (this.resolve(list) as unknown[])[Number(index)];
      }
      case 'Fn::Split': {
        const [separator, source] = args as [string, unknown];
        return this.resolveString(source).split(separator);
      }
      case 'Fn::Sub': {
        const [text, variables] = typeof args === 'string' ? [args, {}] : (args as [string, Record<string, unknown>]);
        return text.replace(/\$\{([^}]+)\}/g, (_, key: string) => {
          if (key in variables) return this.resolveString(variables[key]);
          const [id, attribute] = key.split('.');
          return attribute ? this.getAtt(id as string, attribute) : this.ref(id as string);
        });
      }
      default:
        throw new Error(`${name} is not modelled: add it to ResolvedStack.intrinsic`);
    }
  }

  private pseudoParameter(name: string): string | undefined {
    const values: Record<string, string> = {
      'AWS::Partition': 'aws',
      'AWS::Region': this.region,
      'AWS::AccountId': this.account,
      'AWS::StackName': this.stackName,
      'AWS::StackId': this.stackId,
      'AWS::URLSuffix': 'amazonaws.com',
    };
    return values[name];
  }

  /** The stack's ARN, as `AWS::StackId` gives it: its name and a UUID CloudFormation chose (a fixed stand-in here). */
  get stackId(): string {
    return `arn:aws:cloudformation:${this.region}:${this.account}:stack/${this.stackName}/1f2e3d4c-5b6a-4980-a1b2-c3d4e5f60718`;
  }

  private physicalName(logicalId: string): string {
    return `${this.stackName}-${logicalId}-${RANDOM_SUFFIX}`;
  }

  private derivedId(logicalId: string, length: number): string {
    return createHash('sha256').update(`${this.stackName}/${logicalId}`).digest('hex').slice(0, length);
  }
}

/** Whether a template value is `{ Ref: logicalId }`. */
export function refersTo(value: unknown, logicalId: string): boolean {
  return (value as { Ref?: string } | null)?.Ref === logicalId;
}

/**
 * AWS managed policies attached by the stacks, as AWS publishes them in the AWS Managed Policy reference
 * (https://docs.aws.amazon.com/aws-managed-policy/latest/reference/AWSCodeDeployRoleForLambdaLimited.html, v1;
 * https://docs.aws.amazon.com/aws-managed-policy/latest/reference/AWSLambdaBasicExecutionRole.html, v1).
 */
export const AWS_MANAGED_POLICIES: Readonly<Record<string, PolicyDocument>> = {
  'arn:aws:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited': {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Action: [
          'cloudwatch:DescribeAlarms',
          'lambda:UpdateAlias',
          'lambda:GetAlias',
          'lambda:GetProvisionedConcurrencyConfig',
        ],
        Resource: '*',
      },
      { Effect: 'Allow', Action: ['s3:GetObject', 's3:GetObjectVersion'], Resource: 'arn:aws:s3:::*/CodeDeploy/*' },
      {
        Effect: 'Allow',
        Action: ['s3:GetObject', 's3:GetObjectVersion'],
        Resource: '*',
        Condition: { StringEquals: { 's3:ExistingObjectTag/UseWithCodeDeploy': 'true' } },
      },
      { Effect: 'Allow', Action: ['lambda:InvokeFunction'], Resource: 'arn:aws:lambda:*:*:function:CodeDeployHook_*' },
    ],
  },
  'arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole': {
    Version: '2012-10-17',
    Statement: [
      { Effect: 'Allow', Action: ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents'], Resource: '*' },
    ],
  },
};

/** One request to evaluate. */
export interface PolicyRequest {
  /** A role ARN, or a service principal such as `cloudwatch.amazonaws.com`. */
  principal: string;
  action: string;
  resource: string;
  /** Account that owns the resource. */
  resourceAccount: string;
  context?: Record<string, string | string[]>;
  identityPolicies?: { name: string; policy: PolicyDocument }[];
  resourcePolicy?: PolicyDocument;
}

/**
 * Actions whose IAM authorization data (the Service Authorization Reference, which the evaluator validates requests
 * against) lists no resource type although the service's own permissions reference names one: evaluated without
 * that validation, on the resource the service documents.
 */
const CODEDEPLOY_PERMISSIONS_REFERENCE =
  'https://docs.aws.amazon.com/codedeploy/latest/userguide/auth-and-access-control-permissions-reference.html ' +
  'names the deployment group ARN as its resource';
const UNVALIDATED_ACTIONS: Readonly<Record<string, string>> = {
  'codedeploy:PutLifecycleEventHookExecutionStatus': CODEDEPLOY_PERMISSIONS_REFERENCE,
  'codedeploy:ListDeploymentTargets': CODEDEPLOY_PERMISSIONS_REFERENCE,
  'codedeploy:GetDeploymentTarget': CODEDEPLOY_PERMISSIONS_REFERENCE,
};

/**
 * IAM's decision on a request: `Allowed`, `ImplicitlyDenied` or `ExplicitlyDenied`. A request the evaluator
 * rejects as malformed (an unknown action, a resource of the wrong type for the action, a bad policy) throws, so a
 * typo never passes for a denial.
 */
export async function evaluate(request: PolicyRequest): Promise<EvaluationResult> {
  const simulation: Simulation = {
    request: {
      principal: request.principal,
      action: request.action,
      resource: { resource: request.resource, accountId: request.resourceAccount },
      contextVariables: request.context ?? {},
    },
    identityPolicies: request.identityPolicies ?? [],
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    ...(request.resourcePolicy ? { resourcePolicy: request.resourcePolicy } : {}),
  };
  if (request.action in UNVALIDATED_ACTIONS) return runUnsafeSimulation(simulation, {});
  const result = await runSimulation(simulation, {});
  if (result.resultType === 'error') {
    throw new Error(`The evaluator refused ${request.action} on ${request.resource}: ${JSON.stringify(result.errors)}`);
  }
  return result.overallResult;
}
