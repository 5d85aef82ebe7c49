import { fromEnv } from '@aws-sdk/credential-provider-env';

/**
 * Stands in for `@aws-sdk/credential-provider-node` in the Lambda bundles (an esbuild alias in
 * `infra/bundling.ts`). Lambda hands a function its role's credentials in AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, which the default chain would read first anyway; the rest of that
 * chain (SSO, INI files, process, IMDS, web identity and the STS/SSO clients they need) is ~135 KB of bundle and a
 * third of module init that a function never uses. Local runs (tsx, jest) are not bundled and keep the full chain.
 */
export const defaultProvider = (init?: Parameters<typeof fromEnv>[0]) => fromEnv(init);
