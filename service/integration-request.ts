/**
 * What API Gateway does with a request body for a non-proxy integration, as "Method request behavior for payloads
 * without mapping templates" (https://docs.aws.amazon.com/apigateway/latest/developerguide/integration-passthrough-behaviors.html)
 * states it: no Content-Type is taken as JSON; a template for the media type transforms the body; otherwise
 * WHEN_NO_MATCH passes it through, WHEN_NO_TEMPLATES only when no template is defined, and NEVER refuses it with 415.
 * (It does not say how `; charset=…` is matched: here by the media type, lower-cased.)
 * A MOCK passed a body takes no status from it and answers 500 (aws/aws-cdk#18297). The stack's 404/405 mocks and
 * CORS preflights use this integration; test/infra evaluates them with this function, and the local gateway obeys it.
 */
export type IntegrationRequestOutcome = 'transformed' | 'passed through' | 'refused with 415';

/** The part of an integration (as CloudFormation's AWS::ApiGateway::Method Integration spells it) that decides. */
export interface IntegrationRequestSettings {
  RequestTemplates?: Record<string, string>;
  PassthroughBehavior?: string;
}

/** The request side of the stack's 404/405 MOCK integrations. */
export const MOCK_ANSWER_REQUEST = {
  RequestTemplates: { 'application/json': '{"statusCode": 200}' },
  PassthroughBehavior: 'NEVER',
} as const;

export function integrationRequestOutcome(
  integration: IntegrationRequestSettings,
  contentType: string | undefined,
): IntegrationRequestOutcome {
  const mediaType = (mediaTypeOf(contentType) ?? 'application/json').toLowerCase();
  const templates = Object.keys(integration.RequestTemplates ?? {}).map((type) => type.toLowerCase());
  if (templates.includes(mediaType)) return 'transformed';
  // CloudFormation's default for PassthroughBehavior is WHEN_NO_MATCH (AWS::ApiGateway::Method Integration).
  const behaviour = integration.PassthroughBehavior ?? 'WHEN_NO_MATCH';
  if (behaviour === 'WHEN_NO_MATCH') return 'passed through';
  if (behaviour === 'WHEN_NO_TEMPLATES') return templates.length === 0 ? 'passed through' : 'refused with 415';
  return 'refused with 415';
}

/** A Content-Type without its parameters (`application/json; charset=utf-8` -> `application/json`). */
export function mediaTypeOf(contentType: string | undefined): string | undefined {
  return contentType?.split(';')[0]?.trim();
}
