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
  /** The account stacks, one per distinct account and region among the stages, by `<account>/<region>`. */
  accountStacks: Map<string, ApiGatewayAccountStack>;
}

/**
 * Builds the app: one {@link InventoryStack} per stage, named `PetStoreInventory-<stage>`, each depending on the
 * {@link ApiGatewayAccountStack} of its account and region (created once however many stages share them), with the
 * cdk-nag AwsSolutions checks run at synth (a finding that is not acknowledged with a reason fails synth).
 *
 * Every synth refuses a stage whose account is real and whose configuration is incomplete ({@link assertComplete}),
 * whichever stack the command names: `cdk synth STACK` and `cdk deploy STACK` run the whole app. Context
 * `deploying=<stage>` (set by `npm run deploy:<stage>`) also refuses that stage on the placeholder account
 * ({@link assertDeployable}). With the placeholder account, synth works offline with no configuration.
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

/**
 * The account stack of a stage's account and region. Its CloudFormation name is `PetStoreInventory-account-<region>`
 * in every account; the construct ID carries the account too only when two accounts share a region in this app.
 */
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
  // No termination protection, whichever stages share it. The CDK CLI sets a stack's protection to the synthesized
  // value on every deploy, so a value that depended on the stages configured would flip: a staging deploy that does
  // not know production's account would lift it from an account stack the two share. Protection would guard nothing
  // either: the role and the account setting are retained when the stack is deleted.
  const created = new ApiGatewayAccountStack(app, id, { env: { account, region }, terminationProtection: false });
  accountStacks.set(key, created);
  return created;
}
