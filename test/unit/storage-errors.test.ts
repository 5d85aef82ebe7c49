import { ConditionalCheckFailedException, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import { StorageUnavailableError } from '../../functions/inventory/errors';
import { isStorageUnavailable, translateStorageError } from '../../functions/store/storage-errors';

function named(name: string, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(name), { name }, extra);
}

describe('Store: storage error classification', () => {
  it.each([
    named('ProvisionedThroughputExceededException'),
    named('ThrottlingException'),
    named('TimeoutError'),
    named('InternalServerError'),
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { code: 'ECONNREFUSED' }),
    named('UnknownError', { $metadata: { httpStatusCode: 503 } }),
  ])('treats %p as "storage unavailable" (503)', (error) => {
    expect(isStorageUnavailable(error)).toBe(true);
    expect(() => translateStorageError(error, 'Scan')).toThrow(StorageUnavailableError);
  });

  it('keeps defects such as a missing table as they are (500 and a page)', () => {
    const missing = new ResourceNotFoundException({
      message: 'Requested resource not found',
      $metadata: { httpStatusCode: 400 },
    });
    expect(isStorageUnavailable(missing)).toBe(false);
    expect(() => translateStorageError(missing, 'Scan')).toThrow(ResourceNotFoundException);
    const failedCondition = new ConditionalCheckFailedException({
      message: 'failed',
      $metadata: { httpStatusCode: 400 },
    });
    expect(isStorageUnavailable(failedCondition)).toBe(false);
    expect(isStorageUnavailable('a string')).toBe(false);
  });
});
