/**
 * The request side of the stack's 404/405 MOCK integrations and CORS preflights. A body with no template for its
 * media type would pass through to the MOCK, which takes no status from it and answers 500 (aws/aws-cdk#18297);
 * NEVER refuses it with 415 instead ("Method request behavior for payloads without mapping templates",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/integration-passthrough-behaviors.html).
 * test/infra/integration-evaluation.ts evaluates the stack's integrations as that page states.
 */
export const MOCK_ANSWER_REQUEST = {
  RequestTemplates: { 'application/json': '{"statusCode": 200}' },
  PassthroughBehavior: 'NEVER',
} as const;

/** A Content-Type without its parameters (`application/json; charset=utf-8` -> `application/json`). */
export function mediaTypeOf(contentType: string | undefined): string | undefined {
  return contentType?.split(';')[0]?.trim();
}
