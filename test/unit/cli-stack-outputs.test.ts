import { describeStackOutputs } from '../../cli/target';
import { type QueryStandIn, queryError, startQueryStandIn } from '../helpers/aws-query-stand-in';
import { serveOnLoopback } from '../helpers/loopback-server';

const CFN_NS = 'http://cloudformation.amazonaws.com/doc/2010-05-15/';
const STACK = 'PetStoreInventory-staging';

/**
 * `--stage` reads the stack's outputs with CloudFormation DescribeStacks
 * (https://docs.aws.amazon.com/AWSCloudFormation/latest/APIReference/API_DescribeStacks.html), through a Query-protocol
 * stand-in reached as the SDK reaches any endpoint it is given (AWS_ENDPOINT_URL_CLOUDFORMATION, "Service-specific
 * endpoints", https://docs.aws.amazon.com/sdkref/latest/guide/feature-ss-endpoints.html). Each way it fails is one
 * line that says what to do.
 */
describe('CLI --stage: reading the stack outputs', () => {
  const saved = { ...process.env };
  let standIn: QueryStandIn | undefined;

  beforeEach(() => {
    Object.assign(process.env, {
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_MAX_ATTEMPTS: '1',
    });
    delete process.env.AWS_PROFILE;
    delete process.env.AWS_SESSION_TOKEN;
  });

  afterEach(async () => {
    await standIn?.close();
    standIn = undefined;
    process.env = { ...saved };
  });

  const endpoint = (url: string) => {
    process.env.AWS_ENDPOINT_URL_CLOUDFORMATION = url;
  };
  /** Points the SDK at a stand-in answering every call with `status` and `body`. */
  const answering = async (status: number, body: string) => {
    standIn = await startQueryStandIn(() => ({ status, body }));
    endpoint(standIn.url);
    return standIn;
  };

  it('returns the region and every output of the stack', async () => {
    const cloudFormation = await answering(
      200,
      `<DescribeStacksResponse xmlns="${CFN_NS}"><DescribeStacksResult><Stacks><member><StackName>${STACK}</StackName>` +
        '<CreationTime>2026-11-25T10:00:00Z</CreationTime><StackStatus>UPDATE_COMPLETE</StackStatus><Outputs>' +
        '<member><OutputKey>ApiUrl</OutputKey><OutputValue>https://abc.execute-api.eu-west-1.amazonaws.com/v1</OutputValue></member>' +
        '</Outputs></member></Stacks></DescribeStacksResult></DescribeStacksResponse>',
    );
    await expect(describeStackOutputs(STACK)).resolves.toEqual({
      region: 'eu-west-1',
      outputs: { ApiUrl: 'https://abc.execute-api.eu-west-1.amazonaws.com/v1' },
    });
    expect(cloudFormation.forms.map((form) => [form.get('Action'), form.get('StackName')])).toEqual([
      ['DescribeStacks', STACK],
    ]);
  });

  it('says the stack does not exist in the region, and to check AWS_REGION, for a stack CloudFormation does not know', async () => {
    await answering(400, queryError(CFN_NS, 'ValidationError', `Stack with id ${STACK} does not exist`));
    await expect(describeStackOutputs(STACK)).rejects.toThrow(
      `Stack ${STACK} does not exist in eu-west-1: deploy it first, or check AWS_REGION`,
    );
  });

  it("gives AWS's own reason when CloudFormation rejects the key", async () => {
    await answering(
      403,
      queryError(CFN_NS, 'InvalidClientTokenId', 'The security token included in the request is invalid.'),
    );
    await expect(describeStackOutputs(STACK)).rejects.toThrow(
      `Could not read stack ${STACK} in eu-west-1: The security token included in the request is invalid.`,
    );
  });

  it('names the network error and what to check when CloudFormation cannot be reached at all', async () => {
    // A port that was just free: nothing listens there, so the connection is refused.
    const closed = await serveOnLoopback(() => undefined);
    await closed.close();
    endpoint(closed.url);
    await expect(describeStackOutputs(STACK)).rejects.toThrow(
      `Cannot reach CloudFormation in eu-west-1 (ECONNREFUSED) to read stack ${STACK}: check the network and AWS_REGION`,
    );
  });
});
