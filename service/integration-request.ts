/**
 * What API Gateway does with the body of a request to a non-proxy integration, by the request's Content-Type, the
 * integration's request templates and its passthrough behaviour, as "Method request behavior for payloads without
 * mapping templates for REST APIs in API Gateway"
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/integration-passthrough-behaviors.html) states it:
 * - no Content-Type is taken as `application/json`;
 * - a template for the Content-Type transforms the body (every option);
 * - otherwise WHEN_NO_MATCH passes the body through untransformed; WHEN_NO_TEMPLATES does so only when no template
 *   is defined, and NEVER never does: both refuse an unmapped type with 415 (the UNSUPPORTED_MEDIA_TYPE response).
 *
 * A MOCK integration takes its status from the `{"statusCode": N}` its request template produces ("Mock
 * integrations for REST APIs in API Gateway",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/how-to-mock-integration.html). That a body passed
 * through instead (a form, text, XML) leaves it none and the method fails with 500 is not on that page: it is what
 * users of CDK's MockIntegration report (aws/aws-cdk#18297, an OPTIONS with a form Content-Type answered 500).
 *
 * The page does not say how a Content-Type with parameters (`; charset=utf-8`) is matched: taken here by its media
 * type, lower-cased, which is what every answer below depends on only for `application/json`.
 *
 * The stack's 404/405 mocks and CORS preflights (infra/constructs/inventory-api.ts) are the integration below;
 * test/infra evaluates the synthesized ones with this function, and the local gateway answers as it says.
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

/** The media type of a Content-Type value, without its parameters (`application/json; charset=utf-8` -> `application/json`). */
export function mediaTypeOf(contentType: string | undefined): string | undefined {
  return contentType?.split(';')[0]?.trim();
}
