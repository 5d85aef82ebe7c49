import { App, type AppProps, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { accountStackName, stackName } from '../../service/names';
import { ApiGatewayAccountStack } from '../account-stack';
import { InventoryStack } from '../inventory-stack';
import {
  assertComplete,
  assertDeployable,
  contextLookup,
  STAGES,
  type StageConfig,
  type StageName,
  stageConfig,
} from '../stage-config';

/** The CDK app with both stages. */
export interface InventoryApp {
  app: App;
  stacks: Record<StageName, InventoryStack>;
  /** By `<account>/<region>`. */
  accountStacks: Map<string, ApiGatewayAccountStack>;
}

/**
 * One {@link InventoryStack} per stage after its account's {@link ApiGatewayAccountStack}, with cdk-nag's checks.
 * Refused first: a real account's incomplete stage ({@link assertComplete}), and the stage being deployed if it is
 * incomplete or on the placeholder account ({@link assertDeployable}).
 */
export function createInventoryApp(props: AppProps = {}, env: NodeJS.ProcessEnv = process.env): InventoryApp {
  const app = new App(props);
  const lookup = contextLookup((key) => app.node.tryGetContext(key), env);
  const configs = STAGES.map((stage) => stageConfig(stage, lookup));
  const deploying = lookup('deploying', 'PETSTORE_DEPLOYING');
  for (const config of configs) {
    if (config.stage === deploying) assertDeployable(config);
    else assertComplete(config);
  }

  const accountStacks = new Map<string, ApiGatewayAccountStack>();
  const stacks = {} as Record<StageName, InventoryStack>;
  for (const config of configs) {
    const stack = new InventoryStack(app, stackName(config.stage), { config });
    stack.addStackDependency(
      accountStackFor(app, config, configs, accountStacks),
      "API Gateway's CloudWatch role must be set before a stage with logging is created",
    );
    stacks[config.stage] = stack;
  }
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, stacks, accountStacks };
}

/** A stage's account stack; its construct ID names the account only when two accounts share a region here. */
function accountStackFor(
  app: App,
  config: StageConfig,
  configs: readonly StageConfig[],
  accountStacks: Map<string, ApiGatewayAccountStack>,
): ApiGatewayAccountStack {
  const { account, region } = config.env;
  const key = `${account}/${region}`;
  const existing = accountStacks.get(key);
  if (existing) return existing;
  const accountsInRegion = new Set(configs.filter((c) => c.env.region === region).map((c) => c.env.account));
  const id = accountsInRegion.size > 1 ? `${accountStackName(region)}-${account}` : accountStackName(region);
  // No termination protection: deploys set it to the synthesized value, which would flip with the stages a deploy
  // knows of, and it would guard nothing (the role and the setting are retained when the stack is deleted).
  const created = new ApiGatewayAccountStack(app, id, { env: { account, region }, terminationProtection: false });
  accountStacks.set(key, created);
  return created;
}
