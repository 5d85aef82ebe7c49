import { App, type AppProps, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { InventoryStack } from '../inventory-stack';
import { stackName } from '../shared-names';
import { contextLookup, STAGES, type StageName, stageConfig } from '../stage-config';

/** The CDK app with both stages. */
export interface InventoryApp {
  app: App;
  stacks: Record<StageName, InventoryStack>;
}

/**
 * Builds the app: one {@link InventoryStack} per stage, named `PetStoreInventory-<stage>`, with the cdk-nag
 * AwsSolutions checks run at synth (a finding that is not acknowledged with a reason fails synth).
 */
export function createInventoryApp(props: AppProps = {}, env: NodeJS.ProcessEnv = process.env): InventoryApp {
  const app = new App(props);
  const lookup = contextLookup((key) => app.node.tryGetContext(key), env);
  const stacks = Object.fromEntries(
    STAGES.map((stage) => [stage, new InventoryStack(app, stackName(stage), { config: stageConfig(stage, lookup) })]),
  ) as Record<StageName, InventoryStack>;
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, stacks };
}
