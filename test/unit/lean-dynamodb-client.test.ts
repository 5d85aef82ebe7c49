import {
  createLeanDynamoClient,
  DynamoDBServiceError,
  isRetryableDynamoError,
} from '../../functions/store/lean-dynamodb';
import { isStorageUnavailable } from '../../functions/store/storage-errors';

const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret' };

describe('Lean DynamoDB: configuration from the Lambda environment', () => {
  it.each([
    [{ AWS_REGION: 'eu-west-1' }, 'https://dynamodb.eu-west-1.amazonaws.com/', 'eu-west-1'],
    [{ AWS_DEFAULT_REGION: 'ap-southeast-2' }, 'https://dynamodb.ap-southeast-2.amazonaws.com/', 'ap-southeast-2'],
    [{ AWS_REGION: 'cn-north-1' }, 'https://dynamodb.cn-north-1.amazonaws.com.cn/', 'cn-north-1'],
    [{ AWS_REGION: 'us-gov-west-1' }, 'https://dynamodb.us-gov-west-1.amazonaws.com/', 'us-gov-west-1'],
    [
      {
        AWS_REGION: 'eu-west-1',
        AWS_ENDPOINT_URL: 'http://127.0.0.1:9000',
        AWS_ENDPOINT_URL_DYNAMODB: 'http://localhost:8000',
      },
      'http://localhost:8000/',
      'eu-west-1',
    ],
    [{ AWS_ENDPOINT_URL: 'http://127.0.0.1:9000' }, 'http://127.0.0.1:9000/', 'us-east-1'],
    [
      { AWS_REGION: 'eu-west-1', AWS_ENDPOINT_URL_DYNAMODB: '' },
      'https://dynamodb.eu-west-1.amazonaws.com/',
      'eu-west-1',
    ],
  ])('%p -> %s (%s)', (env, endpoint, region) => {
    const client = createLeanDynamoClient({ env: { ...CREDENTIALS, ...env } });
    expect([client.endpoint, client.region]).toEqual([endpoint, region]);
    client.destroy();
  });

  it('prefers options to the environment', () => {
    const client = createLeanDynamoClient({
      endpoint: 'http://[::1]:8123',
      region: 'eu-central-1',
      env: { AWS_REGION: 'us-west-2', AWS_ENDPOINT_URL_DYNAMODB: 'http://localhost:8000' },
    });
    expect([client.endpoint, client.region]).toEqual(['http://[::1]:8123/', 'eu-central-1']);
  });

  it('refuses to start without a region for AWS, or with an endpoint it cannot sign for', () => {
    expect(() => createLeanDynamoClient({ env: {} })).toThrow(/No AWS region/);
    expect(() => createLeanDynamoClient({ endpoint: 'http://localhost:8000/prefix', env: {} })).toThrow(/no path/);
    expect(() => createLeanDynamoClient({ endpoint: 'ftp://localhost', env: {} })).toThrow(/Unsupported endpoint/);
  });

  it('fails a call, before any connection, when the environment has no credentials', async () => {
    const client = createLeanDynamoClient({ env: { AWS_REGION: 'eu-west-1' } });
    await expect(client.getItem({ TableName: 't', Key: {} })).rejects.toThrow(
      /AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set/,
    );
  });
});

describe('Lean DynamoDB: error classification', () => {
  const named = (name: string, status = 400) => new DynamoDBServiceError(name, name, status);

  it.each([
    [named('ProvisionedThroughputExceededException'), true, true],
    [named('ThrottlingException'), true, true],
    [named('RequestLimitExceeded'), true, true],
    [named('InternalServerError', 500), true, true],
    [named('UnknownError', 503), true, true],
    [named('ServiceUnavailable', 503), true, true],
    [Object.assign(new Error('t'), { name: 'TimeoutError', code: 'ETIMEDOUT' }), true, true],
    [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }), true, true],
    [Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), true, true],
    [named('ConditionalCheckFailedException'), false, false],
    [named('ResourceNotFoundException'), false, false],
    [named('ValidationException'), false, false],
    [named('AccessDeniedException'), false, false],
    [named('UnrecognizedClientException'), false, false],
  ])('%p: retried %p, storage unavailable %p', (error, retried, unavailable) => {
    expect(isRetryableDynamoError(error)).toBe(retried);
    expect(isStorageUnavailable(error)).toBe(unavailable);
  });

  it('carries the status as $metadata.httpStatusCode and the fault side, as SDK exceptions do', () => {
    const error = new DynamoDBServiceError(
      'ConditionalCheckFailedException',
      'The conditional request failed',
      400,
      'rid',
    );
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('ConditionalCheckFailedException');
    expect(error.message).toBe('The conditional request failed');
    expect(error.$metadata).toEqual({ httpStatusCode: 400, requestId: 'rid' });
    expect(error.$fault).toBe('client');
    expect(new DynamoDBServiceError('InternalServerError', 'x', 500).$fault).toBe('server');
  });
});
