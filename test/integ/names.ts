/** The integ app's names, apart from the app so that `npm run integ` reads its arguments without loading CDK. */

/** The throwaway stage's stack name: its own tables, functions and API, destroyed after the run. */
export const INTEG_STACK_NAME = 'PetStoreInventory-integ';
/** The assertions of the first deploy, which creates the stage. */
export const INTEG_ASSERTION_STACK_NAME = 'PetStoreInventory-integ-assertions';
/** The assertion of the second deploy, which updates the stage: it reads the CodeDeploy deployment of that update. */
export const INTEG_ROLLOUT_STACK_NAME = 'PetStoreInventory-integ-rollout';
/**
 * The throwaway stage's name, in every function's `STAGE` and every metric's and alarm's `stage` dimension: run in
 * staging's account, it feeds none of staging's alarms or per-version gates.
 */
export const INTEG_STAGE = 'integ';
/** Context naming the stage's revision: set, it changes every function's configuration, so each gets a new version. */
export const INTEG_REVISION_CONTEXT = 'integ:revision';
