import { fromEnv } from '@aws-sdk/credential-provider-env';

/**
 * Stands in for `@aws-sdk/credential-provider-node` in the Lambda bundles (an esbuild alias in infra/bundling.ts).
 * Lambda hands a function its role's credentials in AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN,
 * which the default chain reads first anyway; the rest of the chain (SSO, INI files, process, IMDS, web identity
 * and the clients they need) is bundle weight and init time a function never uses. What this gives up is in
 * docs/performance.md. Unbundled runs (tsx, jest, the CLI) keep the full chain.
 */
export const defaultProvider = (init?: Parameters<typeof fromEnv>[0]) => fromEnv(init);
