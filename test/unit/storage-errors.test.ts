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
    Object.assign(new Error('connect ENETUNREACH 10.0.0.1:443'), { code: 'ENETUNREACH' }),
    Object.assign(new Error('connect EHOSTUNREACH 10.0.0.1:443'), { code: 'EHOSTUNREACH' }),
    named('UnknownError', { $metadata: { httpStatusCode: 503 } }),
  ])('treats %p as "storage unavailable" (503)', (error) => {
    expect(isStorageUnavailable(error)).toBe(true);
    expect(() => translateStorageError(error, 'Scan')).toThrow(StorageUnavailableError);
  });

  // Errors the Node HTTP stack or a proxy raises with nothing but a message: a plain Error, no code, no
  // $metadata, a name that is not one of the SDK's.
  it.each([
    'socket hang up',
    'read ECONNRESET',
    'connect ECONNREFUSED 127.0.0.1:8000',
    'Connection timed out after 1000 ms',
    'Request timeout',
    'The operation TimedOut',
  ])('treats an error known only by its message, %p, as "storage unavailable" (503)', (message) => {
    const error = new Error(message);
    expect(isStorageUnavailable(error)).toBe(true);
    expect(() => translateStorageError(error, 'Scan')).toThrow(StorageUnavailableError);
  });

  it('keeps an error with only a message that names no network trouble or time-out as it is (500)', () => {
    const error = new Error('One or more parameter values were invalid');
    expect(isStorageUnavailable(error)).toBe(false);
    expect(() => translateStorageError(error, 'Scan')).toThrow(error);
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
