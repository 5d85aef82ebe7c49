/**
 * The request side of the 404/405 MOCKs and CORS preflights: NEVER refuses a body of another media type with 415,
 * where passing it through would make the MOCK answer 500 (aws/aws-cdk#18297; "payloads without mapping templates").
 */
export const MOCK_ANSWER_REQUEST = {
  RequestTemplates: { 'application/json': '{"statusCode": 200}' },
  PassthroughBehavior: 'NEVER',
} as const;

/** A Content-Type without its parameters (`application/json; charset=utf-8` -> `application/json`). */
export function mediaTypeOf(contentType: string | undefined): string | undefined {
  return contentType?.split(';')[0]?.trim();
}
