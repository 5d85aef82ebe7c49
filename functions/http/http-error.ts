import { ERROR_CODES, type ErrorCode } from '../../service/error-codes';

/** An error answered as the Error body of `code`; `cause` is logged, never sent. */
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
