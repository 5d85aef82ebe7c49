import { Duration, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  BasePathMapping,
  type CfnMethod,
  DomainName,
  EndpointType,
  IdentitySource,
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
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { ARecord, HostedZone, RecordTarget } from 'aws-cdk-lib/aws-route53';
import { ApiGatewayDomain } from 'aws-cdk-lib/aws-route53-targets';
import { Construct } from 'constructs';
import { BEARER_VALIDATION_REGEX } from '../../functions/api-keys/key';
import { COMMON_HEADERS } from '../../service/common-headers';
import {
  apiResourcePaths,
  CATCH_ALL_RESOURCE,
  CORS_PREFLIGHT,
  errorTemplate,
  GATEWAY_RESPONSES,
  gatewayCorsHeaders,
  gatewayResponse,
  gatewayResponseHeaders,
  methodNotAllowedMessage,
} from '../../service/gateway-responses';
import { MOCK_ANSWER_REQUEST } from '../../service/integration-request';
import {
  API_STAGE_NAME,
  allowedMethods,
  ROUTES,
  type Route,
  streamIntegrationTimeoutSeconds,
} from '../../service/routes';
import type { CustomDomainConfig } from '../stage-config';

/** Properties of an {@link InventoryApi}. */
export interface InventoryApiProps {
  /** What each route invokes (the function's `live` alias), by operationId; every ROUTES entry must have one. */
  routeFunctions: ReadonlyMap<string, IFunction>;
  /** What the TOKEN authorizer invokes (the authorizer's `live` alias). */
  authorizerFunction: IFunction;
  /** Seconds API Gateway caches an authorizer decision per token. */
  authorizerCacheTtlSeconds: number;
  throttling: { rateLimit: number; burstLimit: number };
  /** Retention of the access and execution logs. */
  accessLogRetention: RetentionDays;
  /** What happens to the access and execution log groups when the stack is deleted. */
  accessLogRemovalPolicy: RemovalPolicy;
  /** Browser origins allowed by CORS. @default none */
  corsOrigins?: readonly string[];
  /** @default none */
  customDomain?: CustomDomainConfig;
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
  // For a streamed answer (the list) the integration latency runs to the stream's end; these tell a slow first byte
  // from a long stream ("Troubleshoot issues with response streaming in API Gateway", access logging:
  // https://docs.aws.amazon.com/apigateway/latest/developerguide/response-streaming-troubleshoot.html).
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
  readonly authorizer: TokenAuthorizer;
  readonly accessLogs: LogGroup;
  /** The log group API Gateway writes execution logs to (it names it; the stack owns it to set its retention). */
  readonly executionLogs: LogGroup;
  /** The base URL clients use, ending in `/v1`. */
  readonly url: string;
  /** The stage's own execute-api URL, ending in `/v1` (the same as {@link url} without a custom domain). */
  readonly stageUrl: string;
  /** With a custom domain: the regional host (`d-….execute-api.<region>.amazonaws.com`) its DNS record points at. */
  customDomainTarget?: string;

  constructor(scope: Construct, id: string, props: InventoryApiProps) {
    super(scope, id);
    const corsOrigins = props.corsOrigins ?? [];

    this.accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: props.accessLogRetention,
      removalPolicy: props.accessLogRemovalPolicy,
    });

    this.authorizer = new TokenAuthorizer(this, 'Authorizer', {
      handler: props.authorizerFunction,
      identitySource: IdentitySource.header('Authorization'),
      validationRegex: BEARER_VALIDATION_REGEX,
      resultsCacheTtl: Duration.seconds(props.authorizerCacheTtlSeconds),
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
        accessLogDestination: new LogGroupLogDestination(this.accessLogs),
        accessLogFormat: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
        tracingEnabled: true,
        metricsEnabled: true,
        // Errors only, never bodies (dataTrace would log the Authorization header); the account stack provides
        // the CloudWatch role execution logging needs.
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
      },
      defaultMethodOptions: { authorizer: this.authorizer },
      ...(corsOrigins.length > 0
        ? {
            defaultCorsPreflightOptions: {
              allowOrigins: [...corsOrigins],
              allowMethods: [...CORS_PREFLIGHT.allowMethods],
              allowHeaders: [...CORS_PREFLIGHT.allowHeaders],
              maxAge: Duration.seconds(CORS_PREFLIGHT.maxAgeSeconds),
              statusCode: CORS_PREFLIGHT.status,
            },
          }
        : {}),
    });

    // Created before the stage, so API Gateway never creates it first (with no retention) and the stack owns it.
    this.executionLogs = new LogGroup(this, 'ExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${this.api.restApiId}/${API_STAGE_NAME}`,
      retention: props.accessLogRetention,
      removalPolicy: props.accessLogRemovalPolicy,
    });
    this.api.deploymentStage.node.addDependency(this.executionLogs);

    for (const route of ROUTES) {
      const fn = props.routeFunctions.get(route.operationId);
      if (!fn) throw new Error(`No function for route ${route.operationId}`);
      this.api.root
        .resourceForPath(route.path)
        .addMethod(route.method, new LambdaIntegration(fn, { allowTestInvoke: false, ...streamingOptions(route) }), {
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
   * Unknown paths answer 404 and known paths with another method 405 (with `Allow`), after the authorizer, the way
   * the local gateway answers: an ANY method on every resource without routes and on `{proxy+}` (404), and an ANY
   * method beside the routes of each route resource (405).
   */
  private addFallbackMethods(corsOrigins: readonly string[]): void {
    const notFound = gatewayResponse('MISSING_AUTHENTICATION_TOKEN');
    // A browser reads these answers as it reads the functions' and the gateway responses' (same CORS headers).
    const cors = gatewayCorsHeaders(corsOrigins);
    const routePaths = new Set(ROUTES.map((route) => route.path));
    for (const path of apiResourcePaths()) {
      const resource = this.api.root.resourceForPath(path);
      if (routePaths.has(path)) {
        const allow = allowedMethods(path).join(', ');
        addMockMethod(resource, 405, errorTemplate('METHOD_NOT_ALLOWED', methodNotAllowedMessage(path, allow)), {
          ...cors,
          Allow: allow,
        });
      } else {
        addMockMethod(resource, notFound.status, errorTemplate(notFound.code, notFound.message), cors);
      }
    }
    addMockMethod(
      this.api.root.addResource(CATCH_ALL_RESOURCE.slice(1)),
      notFound.status,
      errorTemplate(notFound.code, notFound.message),
      cors,
    );
  }

  /** cdk-nag AwsSolutions findings this API accepts, each with the reason a reviewer needs. */
  private acknowledgeNagFindings(): void {
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-COG4',
      reason:
        'The spec authenticates machine clients with API keys sent as Authorization: Bearer <key>; there are no end ' +
        'users for a Cognito user pool. Every method, including the 404/405 mocks, uses the TOKEN Lambda authorizer, ' +
        'which looks the SHA-256 of the key up in the keys table.',
    });
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-APIG2',
      reason:
        'Request validation lives in the handlers, which answer with the spec Error body and the documented codes ' +
        '(VALIDATION_FAILED, MALFORMED_JSON) in a checked order; the one request body (InventoryUpdate) is experimental, ' +
        'so its schema is kept in one place instead of also in an API Gateway model.',
    });
  }

  /**
   * API Gateway's own answers in the Error body, one response per type with its status; the two fallbacks without
   * one, so that API Gateway keeps its own status for whatever reaches them.
   */
  private addGatewayResponses(corsOrigins: readonly string[]): void {
    for (const spec of GATEWAY_RESPONSES) {
      const { installedStatus } = gatewayResponse(spec.type);
      const headers = gatewayResponseHeaders(spec, corsOrigins);
      this.api.addGatewayResponse(toConstructId(spec.type), {
        type: ResponseType.of(spec.type),
        ...(installedStatus === undefined ? {} : { statusCode: String(installedStatus) }),
        responseHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, literal(value)])),
        templates: { 'application/json': errorTemplate(spec.code, spec.message) },
      });
    }
  }

  private addCustomDomain(domain: CustomDomainConfig): string {
    const domainName = new DomainName(this, 'DomainName', {
      domainName: domain.domainName,
      certificate: Certificate.fromCertificateArn(this, 'Certificate', domain.certificateArn),
      endpointType: EndpointType.REGIONAL,
      securityPolicy: SecurityPolicy.TLS_1_2,
    });
    new BasePathMapping(this, 'BasePathMapping', {
      domainName,
      restApi: this.api,
      stage: this.api.deploymentStage,
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
 * A streamed route's integration: the `STREAM` transfer mode (CDK then invokes the alias through Lambda's
 * InvokeWithResponseStream URI) and an integration timeout a few seconds past the function's, which streaming
 * allows past 29 s (up to 15 minutes), so API Gateway never cuts a stream the function can still finish.
 */
function streamingOptions(route: Route): { responseTransferMode?: ResponseTransferMode; timeout?: Duration } {
  if (!route.streaming) return {};
  return {
    responseTransferMode: ResponseTransferMode.STREAM,
    timeout: Duration.seconds(streamIntegrationTimeoutSeconds(route)),
  };
}

/**
 * The CORS preflight methods CDK adds (`Resource.addCorsPreflight`) are MOCKs with an `application/json` template
 * and the default passthrough, WHEN_NO_MATCH: an OPTIONS sent with another Content-Type would reach the mock
 * untransformed and answer 500 (aws/aws-cdk#18297; service/integration-request.ts). NEVER, as on the 404/405 mocks,
 * makes it 415 instead; a browser's preflight has no Content-Type, so it is not affected. CDK takes no passthrough
 * for them, so it is a property override, which CDK leaves out of the Deployment's logical id: the id is told here,
 * or a stage deployed before would keep serving its old preflights (a Deployment is a snapshot).
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
function addMockMethod(
  resource: IResource,
  status: number,
  template: string,
  extraHeaders: Record<string, string> = {},
): void {
  const headers = { ...COMMON_HEADERS, ...extraHeaders };
  const statusCode = String(status);
  resource.addMethod(
    'ANY',
    new MockIntegration({
      // The only integration response has no selection pattern, so it answers whatever the mock returns.
      // A MOCK takes its status from the template's output. WHEN_NO_MATCH would pass a body of another media type
      // (a form, text, XML) through untransformed, with no statusCode in it: API Gateway's 500. NEVER refuses it with
      // the UNSUPPORTED_MEDIA_TYPE response instead (service/integration-request.ts cites the page; the local
      // gateway answers the same, and test/infra/api.test.ts evaluates every mock).
      requestTemplates: { ...MOCK_ANSWER_REQUEST.RequestTemplates },
      passthroughBehavior: PassthroughBehavior[MOCK_ANSWER_REQUEST.PassthroughBehavior],
      integrationResponses: [
        {
          statusCode,
          responseParameters: Object.fromEntries(
            Object.entries(headers).map(([name, value]) => [`method.response.header.${name}`, literal(value)]),
          ),
          responseTemplates: { 'application/json': template },
        },
      ],
    }),
    {
      methodResponses: [
        {
          statusCode,
          responseParameters: Object.fromEntries(
            Object.keys(headers).map((name) => [`method.response.header.${name}`, true]),
          ),
        },
      ],
    },
  );
}

/** `BAD_REQUEST_BODY` -> `BadRequestBody`. */
function toConstructId(type: string): string {
  return type
    .toLowerCase()
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
}
