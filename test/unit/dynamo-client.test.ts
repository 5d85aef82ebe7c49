import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDynamoClient } from '../../functions/store/dynamo-client';

/** Entries of a client's middleware stack, as `identify()` names them (`loggerMiddleware - initialize`). */
const middlewareNames = (client: DynamoDBClient) =>
  client.middlewareStack.identify().map((entry) => entry.split(' ')[0]);

describe('Function: createDynamoClient', () => {
  it("builds a client without the SDK's logger middleware, which the SDK's own client has under that name", () => {
    // Prepare
    const sdkDefault = new DynamoDBClient({ region: 'eu-west-1' });
    const ours = createDynamoClient({ region: 'eu-west-1' });

    // Act
    const [sdkNames, ourNames] = [middlewareNames(sdkDefault), middlewareNames(ours)];

    // Assess: the name still exists in this SDK, so removing it by name is not a silent no-op
    expect(sdkNames).toContain('loggerMiddleware');
    expect(ourNames).not.toContain('loggerMiddleware');
    expect(ourNames.length).toBe(sdkNames.length - 1);
    sdkDefault.destroy();
    ours.destroy();
  });
});
