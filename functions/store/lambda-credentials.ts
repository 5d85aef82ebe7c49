import { fromEnv } from '@aws-sdk/credential-provider-env';

/**
 * `@aws-sdk/credential-provider-node` in the Lambda bundles (an esbuild alias, infra/bundling.ts): Lambda gives a
 * function its credentials in the environment, so the rest of the chain is weight it never uses.
 */
export const defaultProvider = (init?: Parameters<typeof fromEnv>[0]) => fromEnv(init);
