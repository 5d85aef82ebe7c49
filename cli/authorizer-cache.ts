import { APIGatewayClient, FlushStageAuthorizersCacheCommand } from '@aws-sdk/client-api-gateway';
import { CliError, firstLine } from './errors';

/** A deployed stage's REST API, from its stack outputs `RestApiId` and `ApiStageName`. */
export interface StageApi {
  region: string;
  restApiId: string;
  stageName: string;
}

/** Builds the API Gateway client of a region; injected in tests (there is no AWS). */
export type ApiGatewayClientFactory = (region: string) => Pick<APIGatewayClient, 'send' | 'destroy'>;

/** The SDK client, with the operator's own credentials. */
export const createApiGatewayClient: ApiGatewayClientFactory = (region) => new APIGatewayClient({ region });

/** Flushes a stage's authorizer cache, so a revoked key is refused at once. @throws CliError naming the reason */
export async function flushAuthorizerCache(api: StageApi, createClient: ApiGatewayClientFactory): Promise<void> {
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
