import type { PreTrafficDeps } from '../../functions/deploy/pre-traffic';

/**
 * CodeDeploy as the pre-traffic hook meets it, as documented: a Lambda deployment has one target whose
 * lambdaFunctionInfo names the function and the versions the `live` alias moves from and to (ListDeploymentTargets,
 * GetDeploymentTarget; https://docs.aws.amazon.com/codedeploy/latest/APIReference/API_LambdaFunctionInfo.html), and
 * the hook reports with PutLifecycleEventHookExecutionStatus, whose inputs are kept in `reported`.
 */
export function codeDeployStandIn(
  functionName: string,
  currentVersion = '6',
): PreTrafficDeps['codeDeploy'] & { reported: Record<string, unknown>[] } {
  const reported: Record<string, unknown>[] = [];
  const send = async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
    switch (command.constructor.name) {
      case 'ListDeploymentTargetsCommand':
        return { targetIds: ['t-1'] };
      case 'GetDeploymentTargetCommand': {
        const info = { functionName, functionAlias: 'live', currentVersion, targetVersion: '7' };
        return { deploymentTarget: { lambdaTarget: { lambdaFunctionInfo: info } } };
      }
      default:
        reported.push(command.input);
        return {};
    }
  };
  return { reported, send: send as unknown as PreTrafficDeps['codeDeploy']['send'] };
}
