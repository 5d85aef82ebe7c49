import { Duration, Stack, Validations } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  BasePathMapping,
  type CfnMethod,
  DomainName,
  EndpointType,
  type IResource,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  MockIntegration,
  PassthroughBehavior,
  ResponseTransferMode,
  ResponseType,
  RestApi,
  SecurityPolicy,
  TokenAuthorizer,
} from 'aws-cdk-lib/aws-apigateway';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { ARecord, HostedZone, RecordTarget } from 'aws-cdk-lib/aws-route53';
import { ApiGatewayDomain } from 'aws-cdk-lib/aws-route53-targets';
import { Construct } from 'constructs';
import { BEARER_VALIDATION_REGEX } from '../../functions/api-keys/key';
import {
  apiResourcePaths,
  CATCH_ALL_RESOURCE,
  CORS_PREFLIGHT,
  errorTemplate,
  GATEWAY_RESPONSE_TYPES,
  gatewayResponse,
  gatewayResponseHeaders,
  methodNotAllowedMessage,
} from '../../service/gateway-responses';
import { MOCK_ANSWER_REQUEST } from '../../service/integration-request';
import { API_STAGE_NAME, allowedMethods, DEFAULT_FUNCTION_TIMEOUT_SECONDS, ROUTES } from '../../service/routes';
import { AUTHORIZER_CACHE_TTL_SECONDS } from '../../service/stage-limits';
import type { CustomDomainConfig, StageConfig } from '../stage-config';
import type { InventoryFunction } from './inventory-function';

export interface InventoryApiProps
  extends Pick<StageConfig, 'throttling' | 'logRetention' | 'stateful' | 'corsOrigins' | 'customDomain'> {
  /** What each route invokes (its `live` alias), by operationId; every ROUTES entry must have one. */
  functions: ReadonlyMap<string, InventoryFunction>;
  authorizerFunction: InventoryFunction;
}

/** The access log line: one JSON object per request, with what is needed to explain a failure (never the key). */
const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  extendedRequestId: '$context.extendedRequestId',
  requestTime: '$context.requestTime',
  ip: '$context.identity.sourceIp',
  userAgent: '$context.identity.userAgent',
  httpMethod: '$context.httpMethod',
  resourcePath: '$context.resourcePath',
  path: '$context.path',
  protocol: '$context.protocol',
  status: '$context.status',
  responseLength: '$context.responseLength',
  responseLatency: '$context.responseLatency',
  integrationStatus: '$context.integration.status',
  // A streamed answer's integration latency runs to its end; these tell a slow first byte from a long stream
  // ("Troubleshoot issues with response streaming in API Gateway").
  integrationLatency: '$context.integration.latency',
  responseTransferMode: '$context.integration.responseTransferMode',
  timeToAllHeaders: '$context.integration.timeToAllHeaders',
  timeToFirstContent: '$context.integration.timeToFirstContent',
  integrationError: '$context.integration.error',
  principalId: '$context.authorizer.principalId',
  authorizerStatus: '$context.authorizer.status',
  authorizerLatency: '$context.authorizer.latency',
  authorizerError: '$context.authorizer.error',
  errorResponseType: '$context.error.responseType',
  errorMessage: '$context.error.message',
  xrayTraceId: '$context.xrayTraceId',
};

/** A static header value in API Gateway mapping syntax. */
function literal(value: string): string {
  return `'${value}'`;
}

/**
 * The REST API of one stage: its deployment stage is `v1`, its routes come from ROUTES, and every method, including
 * the 404 catch-all and the 405 answers, is behind the TOKEN authorizer, as the local gateway behaves.
 */
export class InventoryApi extends Construct {
  readonly api: RestApi;
  /** The base URL clients use, ending in `/v1`. */
  readonly url: string;
  /** The stage's own execute-api URL, ending in `/v1` (the same as {@link url} without a custom domain). */
  readonly stageUrl: string;
  /** With a custom domain: the regional host (`d-….execute-api.<region>.amazonaws.com`) its DNS record points at. */
  customDomainTarget?: string;

  constructor(scope: Construct, id: string, props: InventoryApiProps) {
    super(scope, id);
    const { corsOrigins } = props;
    const logs = { retention: props.logRetention, removalPolicy: props.stateful.removalPolicy };
    const accessLogs = new LogGroup(this, 'AccessLogs', logs);
    const authorizer = new TokenAuthorizer(this, 'Authorizer', {
      handler: props.authorizerFunction.live,
      validationRegex: BEARER_VALIDATION_REGEX,
      // Also how long a revoked key keeps working where no flush reached it.
      resultsCacheTtl: Duration.seconds(AUTHORIZER_CACHE_TTL_SECONDS),
    });

    this.api = new RestApi(this, 'Api', {
      // Distinct per stack: API Gateway metrics are keyed by ApiName and stage, and both stages' stage is `v1`.
      restApiName: Stack.of(this).stackName,
      description: 'Pet store inventory: stock levels of the pets in the store (spec version 1.0.0)',
      endpointConfiguration: { types: [EndpointType.REGIONAL] },
      cloudWatchRole: false,
      deployOptions: {
        stageName: API_STAGE_NAME,
        throttlingRateLimit: props.throttling.rateLimit,
        throttlingBurstLimit: props.throttling.burstLimit,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
        tracingEnabled: true,
        metricsEnabled: true,
        // Errors only, never bodies (CDK leaves dataTrace off: it would log the Authorization header); the account
        // stack provides the CloudWatch role execution logging needs.
        loggingLevel: MethodLoggingLevel.ERROR,
      },
      defaultMethodOptions: { authorizer },
      defaultCorsPreflightOptions:
        corsOrigins.length > 0
          ? {
              allowOrigins: [...corsOrigins],
              allowMethods: [...CORS_PREFLIGHT.allowMethods],
              allowHeaders: [...CORS_PREFLIGHT.allowHeaders],
              maxAge: Duration.seconds(CORS_PREFLIGHT.maxAgeSeconds),
              statusCode: CORS_PREFLIGHT.status,
            }
          : undefined,
    });

    // Created before the stage, so API Gateway never creates it first (with no retention) and the stack owns it.
    const executionLogs = new LogGroup(this, 'ExecutionLogs', {
      ...logs,
      logGroupName: `API-Gateway-Execution-Logs_${this.api.restApiId}/${API_STAGE_NAME}`,
    });
    this.api.deploymentStage.node.addDependency(executionLogs);

    for (const route of ROUTES) {
      const fn = props.functions.get(route.operationId);
      if (!fn) throw new Error(`No function for route ${route.operationId}`);
      const integration = new LambdaIntegration(fn.live, {
        allowTestInvoke: false,
        responseTransferMode: route.streaming ? ResponseTransferMode.STREAM : undefined,
        // Streaming allows an integration timeout past 29 s: 5 s past the function's (whose first run does not count
        // its init), so API Gateway never cuts a stream the function can still finish.
        timeout: route.streaming
          ? Duration.seconds((route.timeoutSeconds ?? DEFAULT_FUNCTION_TIMEOUT_SECONDS) + 5)
          : undefined,
      });
      this.api.root.resourceForPath(route.path).addMethod(route.method, integration, {
        operationName: route.operationId,
      });
    }
    this.addFallbackMethods(corsOrigins);
    refuseUnmappedPreflightBodies(this.api);
    this.addGatewayResponses(corsOrigins);
    this.acknowledgeNagFindings();

    this.stageUrl = this.api.urlForPath('/').replace(/\/$/, '');
    this.url = props.customDomain ? this.addCustomDomain(props.customDomain) : this.stageUrl;
  }

  /**
   * After the authorizer, as the local gateway answers: an ANY method answering 405 (with `Allow`) beside each
   * resource's routes, and 404 on every resource without routes and on `{proxy+}`.
   */
  private addFallbackMethods(corsOrigins: readonly string[]): void {
    const notFound = gatewayResponse('MISSING_AUTHENTICATION_TOKEN');
    const notFoundBody = errorTemplate(notFound.code, notFound.message);
    const notFoundHeaders = gatewayResponseHeaders(notFound, corsOrigins);
    for (const path of apiResourcePaths()) {
      const resource = this.api.root.resourceForPath(path);
      const allow = allowedMethods(path).join(', ');
      if (!allow) addMockMethod(resource, notFound.status, notFoundBody, notFoundHeaders);
      else {
        const body = errorTemplate('METHOD_NOT_ALLOWED', methodNotAllowedMessage(path, allow));
        addMockMethod(resource, 405, body, gatewayResponseHeaders({ headers: { Allow: allow } }, corsOrigins));
      }
    }
    const catchAll = this.api.root.addResource(CATCH_ALL_RESOURCE.slice(1));
    addMockMethod(catchAll, notFound.status, notFoundBody, notFoundHeaders);
  }

  private acknowledgeNagFindings(): void {
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-COG4',
      reason:
        'Machine clients send API keys (Authorization: Bearer <key>), with no end users for a Cognito user pool: ' +
        'every method, the 404/405 mocks included, uses the TOKEN authorizer, which looks the key up by its SHA-256.',
    });
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-APIG2',
      reason:
        'The handlers validate requests and answer the spec Error body with its documented codes in a checked order; ' +
        'the one request body keeps its schema in one place instead of also in an API Gateway model.',
    });
  }

  /** API Gateway's own answers in the Error body (service/gateway-responses.ts). */
  private addGatewayResponses(corsOrigins: readonly string[]): void {
    for (const spec of GATEWAY_RESPONSE_TYPES.map(gatewayResponse)) {
      const headers = gatewayResponseHeaders(spec, corsOrigins);
      this.api.addGatewayResponse(toConstructId(spec.type), {
        type: ResponseType.of(spec.type),
        statusCode: spec.installedStatus === undefined ? undefined : String(spec.installedStatus),
        responseHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, literal(value)])),
        templates: { 'application/json': errorTemplate(spec.code, spec.message) },
      });
    }
  }

  private addCustomDomain(domain: CustomDomainConfig): string {
    const domainName = new DomainName(this, 'DomainName', {
      domainName: domain.domainName,
      certificate: Certificate.fromCertificateArn(this, 'Certificate', domain.certificateArn),
      securityPolicy: SecurityPolicy.TLS_1_2,
    });
    new BasePathMapping(this, 'BasePathMapping', {
      domainName,
      restApi: this.api,
      basePath: API_STAGE_NAME,
    });
    if (domain.hostedZone) {
      new ARecord(this, 'AliasRecord', {
        zone: HostedZone.fromHostedZoneAttributes(this, 'HostedZone', domain.hostedZone),
        recordName: domain.domainName,
        target: RecordTarget.fromAlias(new ApiGatewayDomain(domainName)),
      });
    }
    this.customDomainTarget = domainName.domainNameAliasDomainName;
    return `https://${domain.domainName}/${API_STAGE_NAME}`;
  }
}

/**
 * CDK's preflight MOCKs answer an OPTIONS with a non-JSON Content-Type 500 (aws/aws-cdk#18297); NEVER makes it 415
 * (a browser's preflight has no Content-Type).
 * An override is not in the Deployment's logical id, so it is added there, or the stage keeps the old methods.
 */
export function refuseUnmappedPreflightBodies(api: RestApi): void {
  for (const method of api.methods) {
    if (method.httpMethod !== 'OPTIONS') continue;
    (method.node.defaultChild as CfnMethod).addPropertyOverride(
      'Integration.PassthroughBehavior',
      MOCK_ANSWER_REQUEST.PassthroughBehavior,
    );
  }
  api.latestDeployment?.addToLogicalId({ corsPreflightPassthrough: MOCK_ANSWER_REQUEST.PassthroughBehavior });
}

/** An authorized ANY method answering `status` with an Error body from a MOCK integration. */
function addMockMethod(resource: IResource, status: number, template: string, headers: Record<string, string>): void {
  const statusCode = String(status);
  // The method response declares each header the integration response sets.
  const parameters = <T>(value: (headerValue: string) => T): Record<string, T> =>
    Object.fromEntries(Object.entries(headers).map(([name, v]) => [`method.response.header.${name}`, value(v)]));
  resource.addMethod(
    'ANY',
    new MockIntegration({
      // The one integration response has no selection pattern: it answers whatever the mock returns. NEVER refuses a
      // body of another media type with 415 instead of passing it through to a 500 (service/integration-request.ts).
      requestTemplates: { ...MOCK_ANSWER_REQUEST.RequestTemplates },
      passthroughBehavior: PassthroughBehavior[MOCK_ANSWER_REQUEST.PassthroughBehavior],
      integrationResponses: [
        {
          statusCode,
          responseParameters: parameters(literal),
          responseTemplates: { 'application/json': template },
        },
      ],
    }),
    {
      methodResponses: [{ statusCode, responseParameters: parameters(() => true) }],
    },
  );
}

/** `BAD_REQUEST_BODY` -> `BadRequestBody`. */
function toConstructId(type: string): string {
  return type.toLowerCase().replace(/(?:^|_)([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
}
