import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../infra/bundling';
import { STAGES, type StageName } from '../../infra/stage-config';
import {
  FEED_COUNTER_KEY,
  HISTORY_FEED_INDEX,
  INVENTORY_LIST_INDEX,
  STACK_OUTPUTS,
  stackName,
} from '../../service/names';
import { evaluate, type PolicyDocument, type PolicyRequest, ResolvedStack, refersTo } from './policy-evaluation';
import { synthesizeBeforeAll, templateMethods } from './synth';

/**
 * Every cross-service permission of both stages, evaluated as IAM evaluates it (identity policies, resource
 * policies, explicit denies: https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html)
 * on the synthesized templates with their intrinsics resolved to concrete ARNs. Each edge is evaluated with requests
 * that must be allowed and neighbouring ones that must not, and docs/deploying.md, "Permissions (evaluated)", lists
 * exactly these edges.
 */

// The default context's stages: alarm destinations add subscriptions and alarm actions, not a permission of the stack.
const synthesized = synthesizeBeforeAll();
const stacks = {} as Record<StageName, ResolvedStack>;

beforeAll(() => {
  for (const stage of STAGES) {
    const { account, region } = synthesized().stacks[stage];
    stacks[stage] = new ResolvedStack(synthesized().templates[stage], stackName(stage), account, region);
  }
});

/** An account that is not the stage's. */
const OTHER_ACCOUNT = '111122223333';

/** The edges this file evaluates, in order, as registered by {@link edge}. */
const EDGES: string[] = [];

/** One edge of the table in docs/deploying.md, evaluated on each stage. */
function edge(name: string, body: (stage: StageName, stack: () => ResolvedStack) => void): void {
  EDGES.push(name);
  describe(name, () => {
    describe.each(STAGES)('%s', (stage) => body(stage, () => stacks[stage]));
  });
}

/** The resolved stack of the stage that is not `stage`. */
const otherStack = (stage: StageName) => stacks[STAGES.find((candidate) => candidate !== stage) as StageName];

const ALLOWED = 'Allowed';

/** Evaluates every request and expects `expected` for each; a failure lists the requests answered otherwise. */
async function expectEach<T>(requests: readonly T[], decide: (request: T) => Promise<string>, expected: string) {
  const answeredOtherwise: { request: T; result: string }[] = [];
  for (const request of requests) {
    const result = await decide(request);
    if (result !== expected) answeredOtherwise.push({ request, result });
  }
  expect(answeredOtherwise).toEqual([]);
}

/** Resource policies CloudFormation attaches to a resource: every statement of every policy resource naming it. */
function attachedPolicy(stack: ResolvedStack, type: string, listProperty: string, logicalId: string): PolicyDocument {
  const statements = stack
    .idsOfType(type)
    .filter((id) =>
      ((stack.resource(id).Properties?.[listProperty] ?? []) as unknown[]).some((r) => refersTo(r, logicalId)),
    )
    .flatMap((id) => (stack.resolve(stack.resource(id).Properties?.PolicyDocument) as PolicyDocument).Statement);
  return { Version: '2012-10-17', Statement: statements };
}

/** The only resource of a type. */
function onlyId(stack: ResolvedStack, type: string): string {
  const ids = stack.idsOfType(type);
  if (ids.length !== 1) throw new Error(`Expected one ${type}, found ${ids.length}`);
  return ids[0] as string;
}

/** `ListInventoryFunction23564031` -> `ListInventoryFunction`: the logical ID without CDK's hash. */
function readableId(logicalId: string): string {
  return logicalId.replace(/[0-9A-F]{8}$/, '');
}

/** The logical ID of the resource of a type whose {@link readableId} is `name`. */
function idByName(stack: ResolvedStack, type: string, name: string): string {
  return stack.idsOfType(type).find((id) => readableId(id) === name) as string;
}

/** A request by a role of the stack, with the role's identity policies. */
function asRole(stack: ResolvedStack, roleId: string, action: string, resource: string): PolicyRequest {
  return {
    principal: stack.getAtt(roleId, 'Arn'),
    action,
    resource,
    resourceAccount: stack.account,
    identityPolicies: stack.rolePolicies(roleId),
  };
}

// SNS: a topic policy replaces the default one, so CloudWatch may publish only if the policy says so; a service
// publishing on behalf of a resource is identified by aws:SourceAccount and aws:SourceArn
// (https://docs.aws.amazon.com/sns/latest/dg/sns-access-policy-use-cases.html,
// https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html).
edge('CloudWatch → alarm topic', (stage, stack) => {
  const topicOf = () => {
    const s = stack();
    const topicId = onlyId(s, 'AWS::SNS::Topic');
    return { arn: s.ref(topicId), policy: attachedPolicy(s, 'AWS::SNS::TopicPolicy', 'Topics', topicId), topicId };
  };
  /** The stack's alarms that notify the topic (an alarm or OK action names it). */
  const alarmArns = (s: ResolvedStack, topicId: string) =>
    s
      .idsOfType('AWS::CloudWatch::Alarm')
      .filter((id) => {
        const props = s.resource(id).Properties ?? {};
        return [...((props.AlarmActions ?? []) as unknown[]), ...((props.OKActions ?? []) as unknown[])].some((a) =>
          refersTo(a, topicId),
        );
      })
      .map((id) => s.getAtt(id, 'Arn'));
  const publish = (sourceArn: string, overrides: Partial<PolicyRequest> & { secure?: boolean } = {}) => {
    const { arn, policy } = topicOf();
    const sourceAccount = sourceArn.split(':')[4] as string;
    return evaluate({
      principal: 'cloudwatch.amazonaws.com',
      action: 'sns:Publish',
      resource: arn,
      resourceAccount: stack().account,
      context: {
        'aws:SourceAccount': sourceAccount,
        'aws:SourceArn': sourceArn,
        'aws:SecureTransport': String(overrides.secure ?? true),
      },
      resourcePolicy: policy,
      ...(overrides.principal ? { principal: overrides.principal } : {}),
    });
  };

  it('lets each alarm of the stage publish over TLS', async () => {
    const arns = alarmArns(stack(), topicOf().topicId);
    expect(arns.length).toBeGreaterThan(0);
    await expectEach(arns, (arn) => publish(arn), ALLOWED);
  });

  it("refuses the other stage's alarms, another account's alarm and another service", async () => {
    const other = otherStack(stage);
    const otherArn = alarmArns(other, onlyId(other, 'AWS::SNS::Topic'))[0] as string;
    expect(await publish(otherArn)).toBe('ImplicitlyDenied');
    const [first] = alarmArns(stack(), topicOf().topicId);
    const foreign = (first as string).replace(`:${stack().account}:`, `:${OTHER_ACCOUNT}:`);
    expect(await publish(foreign)).toBe('ImplicitlyDenied');
    expect(await publish(first as string, { principal: 'events.amazonaws.com' })).toBe('ImplicitlyDenied');
  });

  it("refuses even the stage's own alarm over plain HTTP (the enforceSSL deny)", async () => {
    const [first] = alarmArns(stack(), topicOf().topicId);
    expect(await publish(first as string, { secure: false })).toBe('ExplicitlyDenied');
  });
});

// A KMS key policy is the key's primary access control: a service principal may use the key only if the key policy
// allows it (https://docs.aws.amazon.com/kms/latest/developerguide/key-policies.html); SNS publishes to an encrypted
// topic with the publisher's grant, and AWS's statement for a service publisher names no condition
// (https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services): CloudWatch's
// calls to KMS need not carry aws:SourceAccount, and one refused drops the notification.
edge('CloudWatch → alarm topic key', (_stage, stack) => {
  const keyRequest = (action: string, principal = 'cloudwatch.amazonaws.com'): PolicyRequest => {
    const s = stack();
    const topic = s.resource(onlyId(s, 'AWS::SNS::Topic'));
    const keyArn = s.resolveString(topic.Properties?.KmsMasterKeyId);
    const keyId = s.idsOfType('AWS::KMS::Key').find((id) => s.getAtt(id, 'Arn') === keyArn) as string;
    return {
      principal,
      action,
      resource: keyArn,
      resourceAccount: s.account,
      context: {},
      resourcePolicy: s.resolve(s.resource(keyId).Properties?.KeyPolicy) as PolicyDocument,
    };
  };

  it.each(['kms:GenerateDataKey', 'kms:Decrypt'])(
    'allows CloudWatch %s with no aws:SourceAccount in the request',
    async (action) => {
      expect(await evaluate(keyRequest(action))).toBe(ALLOWED);
    },
  );

  it('refuses another service principal, and every other use of the key by CloudWatch', async () => {
    expect(await evaluate(keyRequest('kms:GenerateDataKey', 'events.amazonaws.com'))).toBe('ImplicitlyDenied');
    const otherUses = ['kms:Encrypt', 'kms:ReEncryptFrom', 'kms:ScheduleKeyDeletion', 'kms:PutKeyPolicy'];
    await expectEach(otherUses, (action) => evaluate(keyRequest(action)), 'ImplicitlyDenied');
  });
});

/** The Lambda resource policy of a function or alias ARN, as Lambda builds it from its permissions. */
function lambdaResourcePolicy(stack: ResolvedStack, targetArn: string): PolicyDocument {
  const statements = stack
    .idsOfType('AWS::Lambda::Permission')
    .map((id) => stack.resource(id).Properties ?? {})
    .filter((props) => stack.functionArn(props.FunctionName) === targetArn)
    .map((props) => {
      const condition: Record<string, Record<string, string>> = {};
      if (props.SourceArn) condition.ArnLike = { 'AWS:SourceArn': stack.resolveString(props.SourceArn) };
      if (props.SourceAccount)
        condition.StringEquals = { 'AWS:SourceAccount': stack.resolveString(props.SourceAccount) };
      return {
        Effect: 'Allow',
        Principal: { Service: props.Principal as string },
        Action: props.Action as string,
        Resource: targetArn,
        ...(Object.keys(condition).length > 0 ? { Condition: condition } : {}),
      };
    });
  return { Version: '2012-10-17', Statement: statements };
}

/** API Gateway invoking a Lambda ARN on behalf of `sourceArn`. */
function apiGatewayInvoke(stack: ResolvedStack, targetArn: string, sourceArn: string): Promise<string> {
  return evaluate({
    principal: 'apigateway.amazonaws.com',
    action: 'lambda:InvokeFunction',
    resource: targetArn,
    resourceAccount: stack.account,
    context: { 'aws:SourceArn': sourceArn, 'aws:SourceAccount': sourceArn.split(':')[4] as string },
    resourcePolicy: lambdaResourcePolicy(stack, targetArn),
  });
}

// API Gateway invokes a function only as its resource-based policy allows, matched on the method's execute-api ARN
// (https://docs.aws.amazon.com/lambda/latest/dg/services-apigateway.html#apigateway-permissions,
// https://docs.aws.amazon.com/lambda/latest/dg/access-control-resource-based.html).
edge('API Gateway → route functions', (stage, stack) => {
  /** Every method of the API with its execute-api ARN (a sample value for each path parameter) and Lambda target. */
  const methods = () => {
    const s = stack();
    const template = synthesized().templates[stage];
    const apiId = s.ref(onlyId(s, 'AWS::ApiGateway::RestApi'));
    const stageName = s.ref(onlyId(s, 'AWS::ApiGateway::Stage'));
    return templateMethods(template).map((method) => {
      const path = method.path.replace(/\{[^}]+\}/g, '7');
      const uri = method.integration.Uri === undefined ? '' : s.resolveString(method.integration.Uri);
      return {
        key: `${method.httpMethod} ${method.path}`,
        arn: (api: string, stageOf = stageName) =>
          `arn:aws:execute-api:${s.region}:${s.account}:${api}/${stageOf}/${method.httpMethod}${path}`,
        apiId,
        target: /\/functions\/(.+)\/invocations$/.exec(uri)?.[1],
      };
    });
  };

  it('invokes each route through its live alias', () => {
    const targets = methods().flatMap((method) => (method.target ? [method.target] : []));
    expect(targets.length).toBeGreaterThan(0);
    for (const target of targets) expect(target).toMatch(/:live$/);
  });

  /**
   * Whether `other` is the same method on a path `own`'s path parameters cover (`GET /inventory/{petId}/history` and
   * `GET /inventory/changes` for `GET /inventory/{petId}`): the permission's ARN has `*` for a parameter, and IAM's `*`
   * spans `/`. API Gateway invokes only the integration a method names, so no request of `other` reaches `own`'s alias.
   */
  const covered = (own: string, other: string) =>
    other !== own &&
    new RegExp(`^${own.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '.+')}$`).test(other);

  it("lets API Gateway invoke each alias for its own method's ARN and no other method of the API", async () => {
    const all = methods();
    const results: Record<string, string[]> = {};
    const expected: Record<string, string[]> = {};
    for (const { target, key } of all) {
      if (!target) continue;
      expected[target] = [
        ...(expected[target] ?? []),
        key,
        ...all.filter((m) => covered(key, m.key)).map((m) => m.key),
      ];
      results[target] ??= [];
    }
    for (const target of Object.keys(results)) {
      for (const method of all) {
        if ((await apiGatewayInvoke(stack(), target, method.arn(method.apiId))) === ALLOWED)
          results[target]?.push(method.key);
      }
    }
    expect(results).toEqual(expected);
  });

  it("refuses the same method of another API, another account's API, and the console's test invoke", async () => {
    for (const method of methods().filter((m) => m.target)) {
      const target = method.target as string;
      const own = method.arn(method.apiId);
      const refused = [
        method.arn('otherapi01'),
        own.replace(`:${stack().account}:`, `:${OTHER_ACCOUNT}:`),
        method.arn(method.apiId, 'test-invoke-stage'),
      ];
      await expectEach(refused, (sourceArn) => apiGatewayInvoke(stack(), target, sourceArn), 'ImplicitlyDenied');
    }
  });
});

edge('API Gateway → authorizer', (_stage, stack) => {
  const authorizer = () => {
    const s = stack();
    const id = onlyId(s, 'AWS::ApiGateway::Authorizer');
    const uri = s.resolveString(s.resource(id).Properties?.AuthorizerUri);
    const target = /\/functions\/(.+)\/invocations$/.exec(uri)?.[1] as string;
    const apiId = s.ref(onlyId(s, 'AWS::ApiGateway::RestApi'));
    const arn = (api: string, authorizerId: string) =>
      `arn:aws:execute-api:${s.region}:${s.account}:${api}/authorizers/${authorizerId}`;
    return { target, arn, apiId, authorizerId: s.ref(id) };
  };

  it("lets API Gateway invoke the authorizer's live alias as this API's authorizer", async () => {
    const { target, arn, apiId, authorizerId } = authorizer();
    expect(target).toMatch(/:live$/);
    expect(await apiGatewayInvoke(stack(), target, arn(apiId, authorizerId))).toBe(ALLOWED);
  });

  it("refuses another authorizer, another API's authorizer, and a method of the API", async () => {
    const { target, arn, apiId, authorizerId } = authorizer();
    const s = stack();
    const refused = [
      arn(apiId, 'other01'),
      arn('otherapi01', authorizerId),
      `arn:aws:execute-api:${s.region}:${s.account}:${apiId}/v1/GET/inventory`,
    ];
    await expectEach(refused, (sourceArn) => apiGatewayInvoke(s, target, sourceArn), 'ImplicitlyDenied');
  });
});

/** The inventory stream's mapping: the role it reads with (its function's), its stream and its on-failure queue. */
function streamMapping(stack: ResolvedStack) {
  const mappingId = stack
    .idsOfType('AWS::Lambda::EventSourceMapping')
    .find((id) => JSON.stringify(stack.resource(id).Properties?.EventSourceArn).includes('InventoryTable'));
  const props = stack.resource(mappingId ?? '').Properties ?? {};
  const functionId = stack.functionByName(stack.resolveString(props.FunctionName));
  const destination = (props.DestinationConfig as { OnFailure: { Destination: { 'Fn::GetAtt': [string, string] } } })
    .OnFailure.Destination;
  return {
    roleId: stack.functionRole(functionId),
    streamArn: stack.resolveString(props.EventSourceArn),
    queueId: destination['Fn::GetAtt'][0],
    queueArn: stack.resolveString(destination),
  };
}

// A DynamoDB stream mapping reads with the function's execution role, which also sends to the on-failure destination
// (https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html#events-dynamodb-permissions,
// https://docs.aws.amazon.com/lambda/latest/dg/services-dynamodb-errors.html).
edge('Stream mapping → inventory stream', (_stage, stack) => {
  it('lets the mapping describe and read the stream, and list streams', async () => {
    const s = stack();
    const { roleId, streamArn } = streamMapping(s);
    const reads = ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'];
    await expectEach(reads, (action) => evaluate(asRole(s, roleId, action, streamArn)), ALLOWED);
    expect(await evaluate(asRole(s, roleId, 'dynamodb:ListStreams', '*'))).toBe(ALLOWED);
  });

  it("refuses another table's stream and writing to the table it reads", async () => {
    const s = stack();
    const { roleId, streamArn } = streamMapping(s);
    const tableArn = streamArn.replace(/\/stream\/.*$/, '');
    const otherStream = streamArn.replace(/table\/[^/]+\//, 'table/another-table/');
    expect(await evaluate(asRole(s, roleId, 'dynamodb:GetRecords', otherStream))).toBe('ImplicitlyDenied');
    const tableActions = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:GetItem'];
    await expectEach(tableActions, (action) => evaluate(asRole(s, roleId, action, tableArn)), 'ImplicitlyDenied');
  });
});

edge('Stream mapping → on-failure queue', (_stage, stack) => {
  const send = (action: string, secure: boolean, queueArn?: string) => {
    const s = stack();
    const mapping = streamMapping(s);
    return evaluate({
      ...asRole(s, mapping.roleId, action, queueArn ?? mapping.queueArn),
      context: { 'aws:SecureTransport': String(secure) },
      resourcePolicy: attachedPolicy(s, 'AWS::SQS::QueuePolicy', 'Queues', mapping.queueId),
    });
  };

  it('lets the mapping send what it gives up on to its queue over TLS', async () => {
    expect(await send('sqs:SendMessage', true)).toBe(ALLOWED);
  });

  it('refuses plain HTTP, reading or purging the queue, and another queue', async () => {
    expect(await send('sqs:SendMessage', false)).toBe('ExplicitlyDenied');
    await expectEach(
      ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:PurgeQueue'],
      (a) => send(a, true),
      'ImplicitlyDenied',
    );
    const other = `arn:aws:sqs:${stack().region}:${stack().account}:another-queue`;
    expect(await send('sqs:SendMessage', true, other)).toBe('ImplicitlyDenied');
  });
});

/**
 * What each function's code sends to DynamoDB, by function (logical ID without CDK's hash) and table (likewise; a
 * table's stream as `<Table> stream`). A function or table of the stacks without a row fails the test: a new one
 * states here what it may do.
 */
const DYNAMODB_ACCESS: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = {
  // functions/store/inventory-table.ts: the paced, ordered Query pages of the list index's one partition; and
  // functions/store/history-table.ts: the GetItem of the feed's counter row, no other row (dynamodb:LeadingKeys, below).
  ListInventoryFunction: {
    [`InventoryTable index ${INVENTORY_LIST_INDEX.name}`]: ['Query'],
    HistoryTable: ['GetItem'],
  },
  // functions/store/history-table.ts: the Query of the feed index's one partition.
  ListInventoryChangesFunction: { [`HistoryTable index ${HISTORY_FEED_INDEX.name}`]: ['Query'] },
  // functions/store/inventory-table.ts: the strongly consistent GetItem of one entry.
  GetInventoryEntryFunction: { InventoryTable: ['GetItem'] },
  // functions/store/inventory-table.ts: the conditional UpdateItem of a PATCH (set or adjustBy, the request built by
  // inventory-write.ts); with an Idempotency-Key, Powertools' DynamoDB layer claims (PutItem), reads (GetItem),
  // completes (UpdateItem) and releases (DeleteItem) its record.
  UpdateInventoryFunction: {
    IdempotencyTable: ['DeleteItem', 'GetItem', 'PutItem', 'UpdateItem'],
    InventoryTable: ['UpdateItem'],
  },
  // functions/store/inventory-table.ts: one TransactWriteItems of the PATCH's updates, then one TransactGetItems of
  // the entries; their actions are governed by UpdateItem and GetItem ("Using IAM with DynamoDB transactions",
  // https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html). The same
  // idempotency records as the PATCH.
  ApplyInventoryChangesFunction: {
    IdempotencyTable: ['DeleteItem', 'GetItem', 'PutItem', 'UpdateItem'],
    InventoryTable: ['GetItem', 'UpdateItem'],
  },
  // functions/handlers/list-inventory-history.ts: the entry's strongly consistent GetItem (404 without one) and the
  // Query of one pet's rows in functions/store/history-table.ts.
  ListInventoryHistoryFunction: { HistoryTable: ['Query'], InventoryTable: ['GetItem'] },
  // 501 answers: no storage.
  GetPetByIdFunction: {},
  ListStoreOrdersFunction: {},
  // functions/store/api-key-table.ts: the key lookup by hash.
  AuthorizerFunction: { ApiKeysTable: ['GetItem'] },
  // Its stream mapping reads the stream; functions/store/history-table.ts writes one row per change (PutItem, in a
  // TransactWriteItems), reads and moves the feed's counter row (GetItem, UpdateItem: that row only, below).
  HistoryFunction: {
    HistoryTable: ['GetItem', 'PutItem', 'UpdateItem'],
    'InventoryTable stream': ['DescribeStream', 'GetRecords', 'GetShardIterator'],
  },
  // Its stream mapping reads the history table's stream (functions/handlers/publish-changes.ts).
  WebhooksPublisherFunction: { 'HistoryTable stream': ['DescribeStream', 'GetRecords', 'GetShardIterator'] },
  // functions/self-check/self-check.ts: writes its short-lived keys, deletes them.
  SelfCheckFunction: { ApiKeysTable: ['DeleteItem', 'PutItem'] },
  // functions/deploy/pre-traffic.ts: the same short-lived keys, for the authorizer's probe.
  PreTrafficHookFunction: { ApiKeysTable: ['DeleteItem', 'PutItem'] },
  // aws-cdk-lib/triggers' provider: invokes the self-check, no table.
  AWSCDKTriggerCustomResourceProviderCustomResourceProviderHandler: {},
};

/** The DynamoDB actions evaluated on every table: reads, writes, PartiQL, and table management. */
const TABLE_ACTIONS = [
  'GetItem',
  'BatchGetItem',
  'Query',
  'Scan',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
  'ConditionCheckItem',
  'PartiQLSelect',
  'PartiQLInsert',
  'PartiQLUpdate',
  'PartiQLDelete',
  'DescribeTable',
  'UpdateTable',
  'DeleteTable',
  'UpdateTimeToLive',
  'ExportTableToPointInTime',
];
const STREAM_ACTIONS = ['DescribeStream', 'GetRecords', 'GetShardIterator'];
/** The reads an index serves (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html). */
const INDEX_ACTIONS = ['Query', 'Scan'];

// Same-account access granted by identity policies alone (DynamoDB tables here carry no resource policy):
// https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html
edge('Function roles → tables', (_stage, stack) => {
  /** Every table and table stream of the stack, by readable name, with the actions evaluated on it. */
  const dataResources = () => {
    const s = stack();
    return s.idsOfType('AWS::DynamoDB::Table').flatMap((id) => {
      const name = readableId(id);
      const table = { name, arn: s.getAtt(id, 'Arn'), actions: TABLE_ACTIONS };
      const properties = s.resource(id).Properties ?? {};
      const stream = properties.StreamSpecification
        ? [{ name: `${name} stream`, arn: s.getAtt(id, 'StreamArn'), actions: STREAM_ACTIONS }]
        : [];
      // A global secondary index is a resource of its own: `table/<name>/index/<index>` (DynamoDB's IAM reference,
      // https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazondynamodb.html).
      const indexes = ((properties.GlobalSecondaryIndexes ?? []) as { IndexName: string }[]).map((index) => ({
        name: `${name} index ${index.IndexName}`,
        arn: `${table.arn}/index/${index.IndexName}`,
        actions: INDEX_ACTIONS,
      }));
      return [table, ...stream, ...indexes];
    });
  };
  const functionIds = () => stack().idsOfType('AWS::Lambda::Function');

  it('has a row for every function of the stack, and no row for a function it does not have', () => {
    const names = functionIds().map(readableId).sort();
    expect(names).toEqual(Object.keys(DYNAMODB_ACCESS).sort());
  });

  it('names only tables of the stack', () => {
    const known = new Set(dataResources().map((resource) => resource.name));
    const named = Object.values(DYNAMODB_ACCESS).flatMap((access) => Object.keys(access));
    expect(named.filter((name) => !known.has(name))).toEqual([]);
  });

  // Every other action on every table, stream and index is evaluated too, and must be refused.
  it('lets each function send exactly the DynamoDB actions its code sends, on every table and stream', async () => {
    const s = stack();
    const allowed: Record<string, Record<string, string[]>> = {};
    const expected: Record<string, Record<string, string[]>> = {};
    for (const functionId of functionIds()) {
      const name = readableId(functionId);
      const roleId = s.functionRole(functionId);
      allowed[name] = {};
      expected[name] = Object.fromEntries(
        Object.entries(DYNAMODB_ACCESS[name] ?? {}).map(([table, actions]) => [table, [...actions].sort()]),
      );
      for (const resource of dataResources()) {
        for (const action of resource.actions) {
          if ((await evaluate(asRole(s, roleId, `dynamodb:${action}`, resource.arn))) !== ALLOWED) continue;
          const granted = allowed[name] as Record<string, string[]>;
          granted[resource.name] = [...(granted[resource.name] ?? []), action].sort();
        }
      }
    }
    expect(allowed).toEqual(expected);
  });
});

// DynamoDB puts the partition key of every item an item action reaches in dynamodb:LeadingKeys
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html).
edge("Function roles → the feed's counter row", (_stage, stack) => {
  const onHistory = (fn: string, action: string, petId: string): PolicyRequest => {
    const s = stack();
    const roleId = s.functionRole(idByName(s, 'AWS::Lambda::Function', fn));
    const tableArn = s.getAtt(idByName(s, 'AWS::DynamoDB::Table', 'HistoryTable'), 'Arn');
    return { ...asRole(s, roleId, action, tableArn), context: { 'dynamodb:LeadingKeys': [petId] } };
  };

  it.each([
    ['ListInventoryFunction', 'dynamodb:GetItem'],
    ['HistoryFunction', 'dynamodb:GetItem'],
    ['HistoryFunction', 'dynamodb:UpdateItem'],
  ])('lets %s %s the counter row', async (fn, action) => {
    expect(await evaluate(onHistory(fn, action, FEED_COUNTER_KEY.petId))).toBe(ALLOWED);
  });

  it.each([
    ['ListInventoryFunction', 'dynamodb:GetItem'],
    ['HistoryFunction', 'dynamodb:GetItem'],
    ['HistoryFunction', 'dynamodb:UpdateItem'],
  ])("refuses %s %s on a pet's history rows", async (fn, action) => {
    expect(await evaluate(onHistory(fn, action, '7'))).toBe('ImplicitlyDenied');
  });

  it("lets the history function put any row, a pet's as well as the counter's", async () => {
    expect(await evaluate(onHistory('HistoryFunction', 'dynamodb:PutItem', '7'))).toBe(ALLOWED);
  });
});

/** The live aliases CodeDeploy shifts, with their deployment group, its role and its alarms. */
function deployments(stack: ResolvedStack) {
  return stack.idsOfType('AWS::Lambda::Alias').flatMap((aliasId) => {
    const alias = stack.resource(aliasId);
    const update = alias.UpdatePolicy?.CodeDeployLambdaAliasUpdate as Record<string, unknown> | undefined;
    if (!update) return [];
    const groupId = (update.DeploymentGroupName as { Ref: string }).Ref;
    const group = stack.resource(groupId).Properties ?? {};
    const alarms = ((group.AlarmConfiguration as { Alarms?: { Name: unknown }[] } | undefined)?.Alarms ?? []).map(
      (alarm) => `arn:aws:cloudwatch:${stack.region}:${stack.account}:alarm:${stack.resolveString(alarm.Name)}`,
    );
    const hooks = ['BeforeAllowTrafficHook', 'AfterAllowTrafficHook'].flatMap((key) =>
      update[key] === undefined ? [] : [stack.functionArn(update[key])],
    );
    return [
      {
        aliasArn: stack.ref(aliasId),
        functionArn: stack.functionArn(alias.Properties?.FunctionName),
        roleId: (group.ServiceRoleArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0],
        groupArn: stack.deploymentGroupArn(stack.resolveString(update.ApplicationName), stack.ref(groupId)),
        alarms,
        hooks,
      },
    ];
  });
}

// CodeDeploy acts with the service role of the deployment group, which it assumes through the role's trust policy
// (https://docs.aws.amazon.com/codedeploy/latest/userguide/getting-started-create-service-role.html); a Lambda
// deployment reads and moves the alias, reads the alarms and invokes the hooks
// (https://docs.aws.amazon.com/codedeploy/latest/userguide/deployment-steps-lambda.html).
edge('CodeDeploy → aliases and alarms', (stage, stack) => {
  // The authorizer's group has no alarm (each refused key is a Lambda error): its pre-traffic hook gates it.
  it('shifts every alias that takes traffic (API Gateway, the stream) through a group gated by alarms or a hook', () => {
    const s = stack();
    const all = deployments(s);
    const invoked = new Set([
      ...s.idsOfType('AWS::Lambda::Permission').map((id) => s.functionArn(s.resource(id).Properties?.FunctionName)),
      ...s
        .idsOfType('AWS::Lambda::EventSourceMapping')
        .map((id) => s.functionArn(s.resource(id).Properties?.FunctionName)),
    ]);
    expect(invoked.size).toBeGreaterThan(0);
    expect([...invoked].filter((arn) => !all.some((d) => d.aliasArn === arn))).toEqual([]);
    for (const deployment of all) expect(deployment.alarms.length + deployment.hooks.length).toBeGreaterThan(0);
  });

  it('lets CodeDeploy, and only CodeDeploy, assume each deployment role', async () => {
    const s = stack();
    for (const roleId of new Set(deployments(s).map((d) => d.roleId))) {
      const assume = (principal: string) =>
        evaluate({
          principal,
          action: 'sts:AssumeRole',
          resource: s.getAtt(roleId, 'Arn'),
          resourceAccount: s.account,
          resourcePolicy: s.resolve(s.resource(roleId).Properties?.AssumeRolePolicyDocument) as PolicyDocument,
        });
      expect(await assume('codedeploy.amazonaws.com')).toBe(ALLOWED);
      expect(await assume('lambda.amazonaws.com')).toBe('ImplicitlyDenied');
    }
  });

  it('lets the role read and move each alias, read its rollback alarms and invoke its hooks', async () => {
    const s = stack();
    for (const d of deployments(s)) {
      const requests = [
        ['lambda:GetAlias', d.aliasArn],
        ['lambda:UpdateAlias', d.aliasArn],
        ...d.alarms.map((alarm) => ['cloudwatch:DescribeAlarms', alarm]),
        ...d.hooks.map((hook) => ['lambda:InvokeFunction', hook]),
      ] as [string, string][];
      await expectEach(requests, ([action, resource]) => evaluate(asRole(s, d.roleId, action, resource)), ALLOWED);
    }
  });

  it("lets each hook's own role report its result to its deployment group and invoke the version it checks", async () => {
    const s = stack();
    for (const d of deployments(s)) {
      for (const hook of d.hooks) {
        const roleId = s.functionRole(s.functionByName(hook));
        const requests = [
          // Authorized on `*` by the Service Authorization Reference, on the deployment group by CodeDeploy's own
          // permissions reference: allowed either way.
          ['codedeploy:ListDeploymentTargets', '*'],
          ['codedeploy:GetDeploymentTarget', '*'],
          ['codedeploy:ListDeploymentTargets', d.groupArn],
          ['codedeploy:GetDeploymentTarget', d.groupArn],
          ['codedeploy:PutLifecycleEventHookExecutionStatus', d.groupArn],
          // The version CodeDeploy moves the alias to: `name:<version>`.
          ['lambda:InvokeFunction', `${d.functionArn}:42`],
          // Its own stack's status, after a failed probe: a rollback's probes only warn (deploy/stack-status.ts).
          ['cloudformation:DescribeStacks', s.stackId],
        ] as [string, string][];
        await expectEach(requests, ([action, resource]) => evaluate(asRole(s, roleId, action, resource)), ALLOWED);
      }
    }
  });

  it("refuses a hook's role another application's deployment group and functions outside the deployments", async () => {
    const s = stack();
    const all = deployments(s);
    const deployed = new Set(all.map((d) => d.functionArn));
    const outside = s
      .idsOfType('AWS::Lambda::Function')
      .map((id) => s.getAtt(id, 'Arn'))
      .filter((arn) => !deployed.has(arn) && !all.some((d) => d.hooks.includes(arn)));
    expect(outside.length).toBeGreaterThan(0);
    for (const hook of new Set(all.flatMap((d) => d.hooks))) {
      const roleId = s.functionRole(s.functionByName(hook));
      const otherGroup = s.deploymentGroupArn('AnotherApplication', 'AnotherGroup');
      const requests = [
        ['codedeploy:PutLifecycleEventHookExecutionStatus', otherGroup],
        // Reading targets is all it may do across deployments: never start, stop or change one.
        ['codedeploy:CreateDeployment', otherGroup],
        ['codedeploy:StopDeployment', '*'],
        ...outside.map((arn) => ['lambda:InvokeFunction', `${arn}:1`]),
        // Reading its stack's status is all it may do there, and only on its own stack.
        ['cloudformation:UpdateStack', s.stackId],
        ['cloudformation:CancelUpdateStack', s.stackId],
        ['cloudformation:DescribeStacks', otherStack(stage).stackId],
      ] as [string, string][];
      const decide = ([action, resource]: [string, string]) => evaluate(asRole(s, roleId, action, resource));
      await expectEach(requests, decide, 'ImplicitlyDenied');
    }
  });

  it("refuses changing a function's code, deleting an alias, invoking a function that is not a hook, and alarms", async () => {
    const s = stack();
    for (const d of deployments(s)) {
      const requests = [
        ['lambda:UpdateFunctionCode', d.functionArn],
        ['lambda:DeleteAlias', d.aliasArn],
        ...d.alarms.flatMap((alarm) => [
          ['cloudwatch:DeleteAlarms', alarm],
          ['cloudwatch:PutMetricAlarm', alarm],
        ]),
        ...(d.hooks.includes(d.functionArn) ? [] : [['lambda:InvokeFunction', d.aliasArn]]),
      ] as [string, string][];
      const decide = ([action, resource]: [string, string]) => evaluate(asRole(s, d.roleId, action, resource));
      await expectEach(requests, decide, 'ImplicitlyDenied');
    }
  });
});

// A CloudFormation custom resource's provider function invokes the trigger's handler with its own role
// (https://docs.aws.amazon.com/cdk/api/v2/docs/aws-cdk-lib.triggers-readme.html).
edge('Deploy trigger → self-check', (_stage, stack) => {
  const trigger = () => {
    const s = stack();
    const props = s.resource(onlyId(s, 'Custom::Trigger')).Properties ?? {};
    const provider = s.functionByName(s.resolveString(props.ServiceToken));
    return { roleId: s.functionRole(provider), handlerArn: s.resolveString(props.HandlerArn) };
  };

  it("lets the trigger's provider invoke the self-check version it runs", async () => {
    const { roleId, handlerArn } = trigger();
    expect(readableId(stack().functionByName(handlerArn))).toBe('SelfCheckFunction');
    expect(await evaluate(asRole(stack(), roleId, 'lambda:InvokeFunction', handlerArn))).toBe(ALLOWED);
  });

  // "Configuring Lambda function logging" (https://docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs-loggroups.html):
  // a function writes to the log group its LoggingConfig names, with its own role's logs permissions.
  it("lets the trigger's provider write its logs into the stack's log group it is pointed at", async () => {
    const s = stack();
    const { roleId } = trigger();
    const provider = s.resource(onlyId(s, 'Custom::Trigger')).Properties?.ServiceToken;
    const logging = s.resource(s.functionByName(s.resolveString(provider))).Properties?.LoggingConfig as {
      LogGroup: unknown;
    };
    const logGroup = s.resolveString(logging.LogGroup);
    expect(logGroup).toMatch(/TriggerProviderLogGroup/);
    // Both actions are authorized on the log stream (Service Authorization Reference, CloudWatch Logs).
    const stream = `arn:aws:logs:${s.region}:${s.account}:log-group:${logGroup}:log-stream:2026/11/25/[$LATEST]x`;
    expect(await evaluate(asRole(s, roleId, 'logs:CreateLogStream', stream))).toBe(ALLOWED);
    expect(await evaluate(asRole(s, roleId, 'logs:PutLogEvents', stream))).toBe(ALLOWED);
  });

  it('refuses invoking any function but the self-check, and changing the self-check', async () => {
    const s = stack();
    const { roleId, handlerArn } = trigger();
    const self = s.functionByName(handlerArn);
    const others = s
      .idsOfType('AWS::Lambda::Alias')
      .filter((id) => !refersTo(s.resource(id).Properties?.FunctionName, self))
      .map((id) => s.ref(id));
    expect(others.length).toBeGreaterThan(0);
    await expectEach(
      others,
      (alias) => evaluate(asRole(s, roleId, 'lambda:InvokeFunction', alias)),
      'ImplicitlyDenied',
    );
    expect(await evaluate(asRole(s, roleId, 'lambda:UpdateFunctionCode', s.getAtt(self, 'Arn')))).toBe(
      'ImplicitlyDenied',
    );
  });
});

// DescribeStacks is authorized on the stack (Service Authorization Reference, AWS CloudFormation): the self-check
// reads its own stack's status, so a rollback's run of the previous self-check only warns.
edge('Self-check → its stack', (stage, stack) => {
  const onStack = (action: string, stackArn: string) => {
    const s = stack();
    return evaluate(
      asRole(s, s.functionRole(idByName(s, 'AWS::Lambda::Function', 'SelfCheckFunction')), action, stackArn),
    );
  };

  it("lets the self-check read its own stack's status", async () => {
    expect(await onStack('cloudformation:DescribeStacks', stack().stackId)).toBe(ALLOWED);
  });

  it('refuses changing its stack and reading the other stage', async () => {
    const changes = ['cloudformation:UpdateStack', 'cloudformation:DeleteStack', 'cloudformation:CancelUpdateStack'];
    await expectEach(changes, (action) => onStack(action, stack().stackId), 'ImplicitlyDenied');
    expect(await onStack('cloudformation:DescribeStacks', otherStack(stage).stackId)).toBe('ImplicitlyDenied');
  });
});

/** The operator's IAM policy, as docs/cli.md and docs/deploying.md give it. */
const OPERATOR_POLICY_PATH = 'docs/operator-policy.json';
function operatorPolicy(): PolicyDocument {
  return JSON.parse(readFileSync(join(PROJECT_ROOT, OPERATOR_POLICY_PATH), 'utf8')) as PolicyDocument;
}

/** The stage's resources the CLI reaches with `--stage`: its stack and what the stack outputs name. */
function operatorTargets(stack: ResolvedStack) {
  const outputs = synthesized().templates[
    STAGES.find((stage) => stackName(stage) === stack.stackName) as StageName
  ].toJSON().Outputs as Record<string, { Value: unknown }>;
  const output = (key: string) => stack.resolveString(outputs[key]?.Value);
  const table = (key: string) => `arn:aws:dynamodb:${stack.region}:${stack.account}:table/${output(key)}`;
  return {
    stack: `arn:aws:cloudformation:${stack.region}:${stack.account}:stack/${stack.stackName}/0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d`,
    apiKeys: table(STACK_OUTPUTS.apiKeysTable),
    inventory: table(STACK_OUTPUTS.inventoryTable),
    history: table(STACK_OUTPUTS.historyTable),
    authorizerCache: `arn:aws:apigateway:${stack.region}::/restapis/${output(STACK_OUTPUTS.restApiId)}/stages/${output(
      STACK_OUTPUTS.apiStageName,
    )}/cache/authorizers`,
  };
}

type OperatorTargets = ReturnType<typeof operatorTargets>;

/** An operator's request: action, resource, and the request context DynamoDB sets for it, where it matters. */
type OperatorRequest = [string, string] | [string, string, Record<string, string[]>];

/** What the operator's policy must never allow. */
const OPERATOR_REFUSED = (t: OperatorTargets, stack: ResolvedStack): OperatorRequest[] => [
  ['dynamodb:DeleteTable', t.inventory],
  ['dynamodb:DeleteTable', t.apiKeys],
  ['dynamodb:DeleteTable', t.history],
  ['dynamodb:UpdateTable', t.inventory],
  ['dynamodb:DeleteItem', t.inventory],
  // An unconditional put would start an entry's version again.
  ['dynamodb:BatchWriteItem', t.inventory],
  ['dynamodb:UpdateItem', t.inventory],
  ['dynamodb:UpdateItem', t.inventory, { 'dynamodb:Attributes': ['petId', 'quantity'] }],
  ['dynamodb:UpdateItem', t.inventory, { 'dynamodb:Attributes': ['petId', 'listShard'] }],
  // The transactions' grants reach no item outside a transaction, nor another kind of item action inside one.
  ['dynamodb:GetItem', t.inventory],
  ['dynamodb:UpdateItem', t.inventory, { 'dynamodb:EnclosingOperation': ['TransactGetItems'] }],
  ['dynamodb:PutItem', t.inventory, { 'dynamodb:EnclosingOperation': ['TransactWriteItems'] }],
  ['dynamodb:DeleteItem', t.inventory, { 'dynamodb:EnclosingOperation': ['TransactWriteItems'] }],
  ['dynamodb:PutItem', t.history],
  ['dynamodb:DeleteItem', t.apiKeys],
  ['cloudformation:DeleteStack', t.stack],
  ['cloudformation:UpdateStack', t.stack],
  ['apigateway:DELETE', t.authorizerCache.replace(/\/cache\/authorizers$/, '')],
  ['cloudformation:DescribeStacks', `arn:aws:cloudformation:${stack.region}:${stack.account}:stack/AnotherApp/0a1b`],
];

// An operator's requests are allowed by their identity policy alone, in their own account
// (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html).
edge('Operator → CLI commands', (stage, stack) => {
  const asOperator = (
    policy: PolicyDocument,
    action: string,
    resource: string,
    context: Record<string, string[]> = {},
  ) =>
    evaluate({
      principal: `arn:aws:iam::${stack().account}:user/operator`,
      action,
      resource,
      context,
      resourceAccount: stack().account,
      identityPolicies: [{ name: 'operator', policy }],
    });

  // What each command sends is recorded from the CLI's own SDK calls and evaluated against this policy in
  // test/integration/cli-operator-policy.test.ts (it needs DynamoDB Local); here, what the policy must never allow.
  it('refuses deleting a table, rewriting stock or history, changing the stack, and other stacks', async () => {
    const t = operatorTargets(stack());
    const decide = ([action, resource, context]: OperatorRequest) =>
      asOperator(operatorPolicy(), action, resource, context);
    await expectEach(OPERATOR_REFUSED(t, stack()), decide, 'ImplicitlyDenied');
  });

  it('narrowed to one stage as docs/deploying.md says, reaches that stage and not the other', async () => {
    const narrowed = JSON.parse(
      JSON.stringify(operatorPolicy()).replaceAll('PetStoreInventory-*', stackName(stage)),
    ) as PolicyDocument;
    const own = operatorTargets(stack());
    const other = operatorTargets(otherStack(stage));
    expect(await asOperator(narrowed, 'dynamodb:PutItem', own.apiKeys)).toBe(ALLOWED);
    expect(await asOperator(narrowed, 'cloudformation:DescribeStacks', own.stack)).toBe(ALLOWED);
    expect(await asOperator(narrowed, 'dynamodb:PutItem', other.apiKeys)).toBe('ImplicitlyDenied');
    expect(await asOperator(narrowed, 'dynamodb:BatchWriteItem', other.inventory)).toBe('ImplicitlyDenied');
    expect(await asOperator(narrowed, 'cloudformation:DescribeStacks', other.stack)).toBe('ImplicitlyDenied');
  });
});

describe('docs/deploying.md, "Permissions (evaluated)"', () => {
  /** The first cell of each row of the section's table. */
  const documentedEdges = () => {
    const text = readFileSync(join(PROJECT_ROOT, 'docs/deploying.md'), 'utf8');
    const section = text.split(/^## /m).find((part) => part.startsWith('Permissions (evaluated)')) ?? '';
    const lines = section.split('\n');
    const start = lines.findIndex((line) => line.startsWith('|'));
    const end = lines.findIndex((line, index) => index > start && !line.startsWith('|'));
    return lines.slice(start + 2, end).map((line) => (line.split('|')[1] ?? '').trim());
  };

  it('lists exactly the edges this file evaluates', () => {
    expect(documentedEdges()).toEqual(EDGES);
  });

  it('gives the operator policy by its path', () => {
    const text = readFileSync(join(PROJECT_ROOT, 'docs/deploying.md'), 'utf8');
    expect(text).toContain(OPERATOR_POLICY_PATH);
    expect(readFileSync(join(PROJECT_ROOT, 'docs/cli.md'), 'utf8')).toContain(OPERATOR_POLICY_PATH);
  });
});
