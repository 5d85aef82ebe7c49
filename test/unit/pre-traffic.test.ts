import { type PreTrafficDeps, runPreTrafficCheck } from '../../functions/deploy/pre-traffic';

const EVENT = { DeploymentId: 'd-1', LifecycleEventHookExecutionId: 'hook-1' };

/**
 * CodeDeploy as documented: a Lambda deployment has one target whose lambdaFunctionInfo names the function and the
 * version the alias moves to (GetDeploymentTarget), and the hook reports with PutLifecycleEventHookExecutionStatus
 * (https://docs.aws.amazon.com/codedeploy/latest/APIReference/API_LambdaFunctionInfo.html).
 */
function codeDeploy(functionName = 'stage-UpdateInventoryFunction-abc') {
  const reported: unknown[] = [];
  return {
    reported,
    send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      switch (command.constructor.name) {
        case 'ListDeploymentTargetsCommand':
          return { targetIds: ['t-1'] };
        case 'GetDeploymentTargetCommand':
          return {
            deploymentTarget: {
              lambdaTarget: { lambdaFunctionInfo: { functionName, functionAlias: 'live', targetVersion: '7' } },
            },
          };
        default:
          reported.push(command.input);
          return {};
      }
    },
  };
}

/** Lambda's Invoke: a payload, and FunctionError when the function threw. */
function lambda(answer: (name: string, event: Record<string, unknown>) => { payload: unknown; error?: string }) {
  const invoked: string[] = [];
  return {
    invoked,
    send: async (command: { input: { FunctionName: string; Payload: Uint8Array } }) => {
      invoked.push(command.input.FunctionName);
      const { payload, error } = answer(
        command.input.FunctionName,
        JSON.parse(new TextDecoder().decode(command.input.Payload)),
      );
      return { Payload: new TextEncoder().encode(JSON.stringify(payload)), ...(error ? { FunctionError: error } : {}) };
    },
  };
}

const targets: PreTrafficDeps['targets'] = {
  'stage-UpdateInventoryFunction-abc': { route: 'updateInventory' },
  'stage-AuthorizerFunction-abc': { authorizer: true },
};

describe('Function: pre-traffic hook', () => {
  it('invokes the new version itself with a PATCH that changes nothing and reports Succeeded on its 404', async () => {
    // Prepare
    const cd = codeDeploy();
    const fn = lambda((_, event) => {
      expect(JSON.parse(event.body as string)).toEqual({ quantity: 2147483647, expectedQuantity: 2147483647 });
      return { payload: { statusCode: 404, body: '{}' } };
    });

    // Act
    const verdict = await runPreTrafficCheck(EVENT, { codeDeploy: cd, lambda: fn, targets });

    // Assess
    expect(fn.invoked).toEqual(['stage-UpdateInventoryFunction-abc:7']);
    expect(verdict.status).toBe('Succeeded');
    expect(cd.reported).toEqual([
      { deploymentId: 'd-1', lifecycleEventHookExecutionId: 'hook-1', status: 'Succeeded' },
    ]);
  });

  it.each([
    ['a 500', { payload: { statusCode: 500, body: '{}' } }],
    ['a crash', { payload: { errorMessage: 'boom' }, error: 'Unhandled' }],
  ])('reports Failed when the new version answers with %s, so no traffic moves to it', async (_, answer) => {
    const cd = codeDeploy();

    const verdict = await runPreTrafficCheck(EVENT, { codeDeploy: cd, lambda: lambda(() => answer), targets });

    expect(verdict.status).toBe('Failed');
    expect(cd.reported).toEqual([{ deploymentId: 'd-1', lifecycleEventHookExecutionId: 'hook-1', status: 'Failed' }]);
  });

  it('passes an authorizer that refuses an unknown key with Unauthorized, and fails one that cannot check keys', async () => {
    const refuses = lambda(() => ({ payload: { errorMessage: 'Unauthorized' }, error: 'Unhandled' }));
    const broken = lambda(() => ({ payload: { errorMessage: 'AccessDeniedException' }, error: 'Unhandled' }));
    const deps = (fn: ReturnType<typeof lambda>) => ({
      codeDeploy: codeDeploy('stage-AuthorizerFunction-abc'),
      lambda: fn,
      targets,
    });

    expect((await runPreTrafficCheck(EVENT, deps(refuses))).status).toBe('Succeeded');
    expect((await runPreTrafficCheck(EVENT, deps(broken))).status).toBe('Failed');
  });

  it('reports Failed for a function it has no probe for, rather than letting it through', async () => {
    const cd = codeDeploy('stage-Unknown-abc');

    const verdict = await runPreTrafficCheck(EVENT, {
      codeDeploy: cd,
      lambda: lambda(() => ({ payload: {} })),
      targets,
    });

    expect(verdict).toEqual({ status: 'Failed', reason: 'no probe for function stage-Unknown-abc' });
  });
});
