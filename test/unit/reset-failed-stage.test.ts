import { FAILED_CREATE_STATUS, type ResetClients, resetFailedStage } from '../../cli/reset-failed-stage';

/** A client stand-in: records each command (its class name and input) and answers by class name. */
function fakeClient(answers: Record<string, (input: Record<string, unknown>) => unknown> = {}) {
  const calls: { command: string; input: Record<string, unknown> }[] = [];
  return {
    calls,
    send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      const name = command.constructor.name;
      calls.push({ command: name, input: command.input });
      const answer = answers[name];
      return answer ? answer(command.input) : {};
    },
  };
}

/**
 * CloudFormation as documented: a failed create ends in ROLLBACK_COMPLETE, a state that can only be deleted
 * (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/using-cfn-describing-stacks.html), and the rollback
 * skips deleting resources whose DeletionPolicy is Retain (DELETE_SKIPPED); DescribeStacks on a deleted stack throws
 * "Stack with id … does not exist".
 */
function cloudFormation(status: string) {
  let deleted = false;
  return fakeClient({
    DescribeStacksCommand: (input) => {
      if (deleted) throw new Error(`Stack with id ${String(input.StackName)} does not exist`);
      return { Stacks: [{ StackStatus: status }] };
    },
    ListStackResourcesCommand: (input) =>
      input.NextToken === undefined
        ? {
            StackResourceSummaries: [
              {
                LogicalResourceId: 'InventoryTableFD135387',
                ResourceType: 'AWS::DynamoDB::Table',
                ResourceStatus: 'DELETE_SKIPPED',
                PhysicalResourceId: 'prod-inventory',
              },
              {
                LogicalResourceId: 'ListInventoryFunction23564031',
                ResourceType: 'AWS::Lambda::Function',
                ResourceStatus: 'DELETE_COMPLETE',
                PhysicalResourceId: 'fn',
              },
              {
                LogicalResourceId: 'MonitoringAlarmTopicKey',
                ResourceType: 'AWS::KMS::Key',
                ResourceStatus: 'DELETE_SKIPPED',
                PhysicalResourceId: 'key-1',
              },
            ],
            NextToken: 'page-2',
          }
        : {
            StackResourceSummaries: [
              {
                LogicalResourceId: 'HistoryFailedRecords',
                ResourceType: 'AWS::SQS::Queue',
                ResourceStatus: 'DELETE_SKIPPED',
                PhysicalResourceId: 'https://sqs/queue',
              },
              {
                LogicalResourceId: 'InventoryApiAccessLogs',
                ResourceType: 'AWS::Logs::LogGroup',
                ResourceStatus: 'DELETE_SKIPPED',
                PhysicalResourceId: 'access-logs',
              },
              {
                LogicalResourceId: 'Odd',
                ResourceType: 'AWS::Example::Thing',
                ResourceStatus: 'DELETE_SKIPPED',
                PhysicalResourceId: 'odd-1',
              },
            ],
          },
    DeleteStackCommand: () => {
      deleted = true;
      return {};
    },
  });
}

/**
 * DynamoDB as documented: turning deletion protection off leaves the table UPDATING for a while, and DeleteTable on a
 * table in CREATING or UPDATING answers ResourceInUseException
 * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_DeleteTable.html).
 */
function dynamodb() {
  let status = 'ACTIVE';
  let describesUntilActive = 0;
  return fakeClient({
    UpdateTableCommand: () => {
      status = 'UPDATING';
      describesUntilActive = 2;
      return { TableDescription: { TableStatus: status } };
    },
    DescribeTableCommand: () => {
      if (status === 'UPDATING' && describesUntilActive-- === 0) status = 'ACTIVE';
      return { Table: { TableStatus: status } };
    },
    DeleteTableCommand: (input) => {
      if (status !== 'ACTIVE') {
        const error = new Error(`Attempt to change a resource which is still in use: Table ${String(input.TableName)}`);
        error.name = 'ResourceInUseException';
        throw error;
      }
      status = 'DELETING';
      return { TableDescription: { TableStatus: status } };
    },
  });
}

function clientsFor(status: string) {
  const clients = {
    cloudFormation: cloudFormation(status),
    dynamodb: dynamodb(),
    kms: fakeClient(),
    sqs: fakeClient(),
    logs: fakeClient(),
  };
  return clients;
}

describe('Command: stage:reset-failed', () => {
  it('lifts termination protection, deletes the ROLLBACK_COMPLETE stack, then removes exactly what the rollback retained (a table once it is ACTIVE again)', async () => {
    // Prepare
    const clients = clientsFor(FAILED_CREATE_STATUS);
    const lines: string[] = [];

    // Act
    const result = await resetFailedStage('PetStoreInventory-production', clients as unknown as ResetClients, {
      dryRun: false,
      log: (line) => lines.push(line),
      sleep: async () => undefined,
    });

    // Assess
    const cfnCalls = clients.cloudFormation.calls.map((c) => c.command);
    expect(cfnCalls.indexOf('UpdateTerminationProtectionCommand')).toBeLessThan(cfnCalls.indexOf('DeleteStackCommand'));
    expect(clients.cloudFormation.calls.find((c) => c.command === 'UpdateTerminationProtectionCommand')?.input).toEqual(
      {
        StackName: 'PetStoreInventory-production',
        EnableTerminationProtection: false,
      },
    );
    expect(clients.dynamodb.calls).toEqual([
      { command: 'UpdateTableCommand', input: { TableName: 'prod-inventory', DeletionProtectionEnabled: false } },
      { command: 'DescribeTableCommand', input: { TableName: 'prod-inventory' } },
      { command: 'DescribeTableCommand', input: { TableName: 'prod-inventory' } },
      { command: 'DescribeTableCommand', input: { TableName: 'prod-inventory' } },
      { command: 'DeleteTableCommand', input: { TableName: 'prod-inventory' } },
    ]);
    expect(lines).toContain('removed AWS::DynamoDB::Table prod-inventory');
    expect(clients.kms.calls).toEqual([
      { command: 'ScheduleKeyDeletionCommand', input: { KeyId: 'key-1', PendingWindowInDays: 7 } },
    ]);
    expect(clients.sqs.calls).toEqual([{ command: 'DeleteQueueCommand', input: { QueueUrl: 'https://sqs/queue' } }]);
    expect(clients.logs.calls).toEqual([{ command: 'DeleteLogGroupCommand', input: { logGroupName: 'access-logs' } }]);
    expect(result.leftovers.map((l) => l.logicalId)).not.toContain('ListInventoryFunction23564031');
    expect(result.notRemoved).toEqual([{ type: 'AWS::Example::Thing', logicalId: 'Odd', physicalId: 'odd-1' }]);
    expect(lines).toContain('not removed (remove it yourself): AWS::Example::Thing odd-1');
  });

  it('still removes the other leftovers when one removal fails, and reports the failed one as not removed', async () => {
    // Prepare
    const clients = {
      ...clientsFor(FAILED_CREATE_STATUS),
      kms: fakeClient({
        ScheduleKeyDeletionCommand: () => {
          const error = new Error('User is not authorized to perform: kms:ScheduleKeyDeletion');
          error.name = 'AccessDeniedException';
          throw error;
        },
      }),
    };
    const lines: string[] = [];

    // Act
    const result = await resetFailedStage('PetStoreInventory-production', clients as unknown as ResetClients, {
      dryRun: false,
      log: (line) => lines.push(line),
      sleep: async () => undefined,
    });

    // Assess
    expect(clients.dynamodb.calls.map((c) => c.command)).toContain('DeleteTableCommand');
    expect(clients.sqs.calls).toEqual([{ command: 'DeleteQueueCommand', input: { QueueUrl: 'https://sqs/queue' } }]);
    expect(clients.logs.calls).toEqual([{ command: 'DeleteLogGroupCommand', input: { logGroupName: 'access-logs' } }]);
    expect(result.notRemoved).toEqual([
      { type: 'AWS::KMS::Key', logicalId: 'MonitoringAlarmTopicKey', physicalId: 'key-1' },
      { type: 'AWS::Example::Thing', logicalId: 'Odd', physicalId: 'odd-1' },
    ]);
    expect(lines).toContain(
      'could not remove AWS::KMS::Key key-1: AccessDeniedException: User is not authorized to perform: kms:ScheduleKeyDeletion',
    );
    expect(lines).toContain('not removed (remove it yourself): AWS::KMS::Key key-1');
  });

  it('reports a table that never leaves UPDATING as not removed, without sending DeleteTable', async () => {
    const clients = {
      ...clientsFor(FAILED_CREATE_STATUS),
      dynamodb: fakeClient({ DescribeTableCommand: () => ({ Table: { TableStatus: 'UPDATING' } }) }),
    };
    const lines: string[] = [];

    const result = await resetFailedStage('PetStoreInventory-production', clients as unknown as ResetClients, {
      dryRun: false,
      log: (line) => lines.push(line),
      sleep: async () => undefined,
    });

    expect(clients.dynamodb.calls.map((c) => c.command)).not.toContain('DeleteTableCommand');
    expect(result.notRemoved.map((l) => l.physicalId)).toEqual(['prod-inventory', 'odd-1']);
    expect(lines).toContain(
      'could not remove AWS::DynamoDB::Table prod-inventory: Error: table prod-inventory was not ACTIVE after 300 s',
    );
    expect(clients.sqs.calls).toHaveLength(1);
  });

  it('only lists the leftovers with --dry-run, and changes nothing', async () => {
    const clients = clientsFor(FAILED_CREATE_STATUS);
    const lines: string[] = [];

    const result = await resetFailedStage('PetStoreInventory-production', clients as unknown as ResetClients, {
      dryRun: true,
      log: (line) => lines.push(line),
    });

    expect(result.leftovers).toHaveLength(5);
    expect(lines[0]).toBe('left behind: AWS::DynamoDB::Table InventoryTableFD135387 prod-inventory');
    expect(clients.cloudFormation.calls.map((c) => c.command)).toEqual([
      'DescribeStacksCommand',
      'ListStackResourcesCommand',
      'ListStackResourcesCommand',
    ]);
    for (const client of [clients.dynamodb, clients.kms, clients.sqs, clients.logs]) expect(client.calls).toEqual([]);
  });

  it.each(['CREATE_COMPLETE', 'UPDATE_ROLLBACK_COMPLETE', 'UPDATE_COMPLETE'])(
    'refuses a stack in %s and changes nothing: it once held real data',
    async (status) => {
      const clients = clientsFor(status);

      await expect(
        resetFailedStage('PetStoreInventory-production', clients as unknown as ResetClients, {
          dryRun: false,
          log: () => undefined,
        }),
      ).rejects.toThrow(`PetStoreInventory-production is ${status}, not ROLLBACK_COMPLETE`);
      expect(clients.cloudFormation.calls.map((c) => c.command)).toEqual(['DescribeStacksCommand']);
    },
  );
});
