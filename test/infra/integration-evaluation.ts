import { mediaTypeOf } from '../../service/integration-request';

/**
 * What API Gateway does with a request body for a non-proxy integration, as "Method request behavior for payloads
 * without mapping templates" (https://docs.aws.amazon.com/apigateway/latest/developerguide/integration-passthrough-behaviors.html)
 * states it: no Content-Type is taken as JSON; a template for the media type transforms the body; otherwise
 * WHEN_NO_MATCH passes it through, WHEN_NO_TEMPLATES only when no template is defined, and NEVER refuses it with 415.
 * (It does not say how `; charset=…` is matched: here by the media type, lower-cased.)
 */
export type IntegrationRequestOutcome = 'transformed' | 'passed through' | 'refused with 415';

/** The part of an integration (as CloudFormation's AWS::ApiGateway::Method Integration spells it) that decides. */
export interface IntegrationRequestSettings {
  RequestTemplates?: Record<string, string>;
  PassthroughBehavior?: string;
}

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
