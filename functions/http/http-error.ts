import { ERROR_CODES, type ErrorCode } from '../../service/error-codes';

/**
 * An error meant for the client: the response is the Error body with `code`, `message` and the status belonging to
 * `code`. Internals go in `cause`, which is logged and never sent.
 */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly options: { cause?: unknown; headers?: Record<string, string> } = {},
  ) {
    super(message, { cause: options.cause });
    this.status = ERROR_CODES[code];
  }
}
