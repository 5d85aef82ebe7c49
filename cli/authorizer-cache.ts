import { APIGatewayClient, FlushStageAuthorizersCacheCommand } from '@aws-sdk/client-api-gateway';
import { CliError, firstLine } from './errors';

/** A deployed stage's REST API, from its stack outputs `RestApiId` and `ApiStageName`. */
export interface StageApi {
  region: string;
  restApiId: string;
  stageName: string;
}

/** What flushing needs of an API Gateway client (the SDK's `APIGatewayClient` fits; tests pass a fake). */
export interface ApiGatewaySender {
  send(command: FlushStageAuthorizersCacheCommand): Promise<unknown>;
  destroy(): void;
}

/** Builds the API Gateway client of a region; injected in tests (there is no AWS). */
export type ApiGatewayClientFactory = (region: string) => ApiGatewaySender;

/** The SDK client, with the operator's own credentials. */
export const createApiGatewayClient: ApiGatewayClientFactory = (region) => new APIGatewayClient({ region });

/**
 * Flushes the authorizer cache of a stage (API Gateway FlushStageAuthorizersCache), so every key is checked against
 * the keys table again on its next request: a revoked key is refused at once instead of after the cache TTL.
 *
 * @throws CliError naming the API, stage and reason when API Gateway refuses or cannot be reached.
 */
export async function flushAuthorizerCache(
  api: StageApi,
  createClient: ApiGatewayClientFactory = createApiGatewayClient,
): Promise<void> {
  const client = createClient(api.region);
  try {
    await client.send(new FlushStageAuthorizersCacheCommand({ restApiId: api.restApiId, stageName: api.stageName }));
  } catch (error) {
    const reason = firstLine((error as Error)?.message || (error as Error)?.name || String(error));
    throw new CliError(
      `Could not flush the authorizer cache of API ${api.restApiId} stage ${api.stageName} in ${api.region}: ${reason}`,
      { cause: error },
    );
  } finally {
    client.destroy();
  }
}
