import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { MAX_BODY_BYTES } from '../../functions/http/json-body';
import { errorBody } from '../../functions/http/responses';
import { ERROR_CODES, type ErrorCode } from '../../service/error-codes';
import { gatewayResponseHeaders } from '../../service/gateway-responses';
import { API_STAGE_NAME } from '../../service/routes';
import type { FirewallConfig } from '../stage-config';

export interface InventoryFirewallProps extends FirewallConfig {
  stage: Stage;
  /** A block answers an allowed origin with the CORS headers of API Gateway's own answers. */
  corsOrigins: readonly string[];
}

/**
 * What WAF accepts as a custom response header (AWS WAF API Reference, "CustomHTTPHeader": a name of 1 to 64
 * characters of `[a-zA-Z0-9._$-]`, a value of 1 to 255); synth refuses anything else rather than a deploy failing.
 */
export function assertWafHeader(name: string, value: string): void {
  if (!/^[a-zA-Z0-9._$-]{1,64}$/.test(name) || value.length < 1 || value.length > 255)
    throw new Error(`WAF refuses the custom response header ${name}: ${value.slice(0, 80)} (CustomHTTPHeader limits)`);
}

/** Seconds of the rate-based rule's window: also how long a blocked client is asked to wait (`Retry-After`). */
export const RATE_WINDOW_SECONDS = 60;

/**
 * Labels that mean "block" from the AWS managed rule groups, which only count, so that our own rule blocks with the
 * Error body (a managed rule's Block has no custom response). The IP reputation list's DDoS rule only counts by design.
 */
export const BLOCKING_MANAGED_LABELS = {
  namespaces: ['awswaf:managed:aws:core-rule-set:'],
  labels: [
    'awswaf:managed:aws:amazon-ip-list:AWSManagedIPReputationList',
    'awswaf:managed:aws:amazon-ip-list:AWSManagedReconnaissanceList',
  ],
} as const;

/**
 * `POST /inventory/changes` as WAF sees it (with the stage): 100 changes are far over the PATCH's 4096 bytes, so its
 * body is exempt from both size rules (ours, the core rule set's 8 KB); its function refuses one over 65,536 bytes.
 */
export const BATCH_REQUEST = { method: 'POST', uriPath: `/${API_STAGE_NAME}/inventory/changes` } as const;

/** The core rule set's label for a body over 8 KB (AWS WAF Developer Guide, "Baseline rule groups"). */
const CORE_RULE_SET_BODY_SIZE_LABEL = 'awswaf:managed:aws:core-rule-set:SizeRestrictions_Body';

/** Matches a request whose `field` is exactly `value`. */
function exactly(field: 'method' | 'uriPath', value: string): CfnWebACL.StatementProperty {
  return {
    byteMatchStatement: {
      fieldToMatch: { [field]: {} },
      positionalConstraint: 'EXACTLY',
      searchString: value,
      textTransformations: [{ priority: 0, type: 'NONE' }],
    },
  };
}

const IS_BATCH: CfnWebACL.StatementProperty = {
  andStatement: { statements: [exactly('method', BATCH_REQUEST.method), exactly('uriPath', BATCH_REQUEST.uriPath)] },
};

/**
 * Every label of a managed namespace but a batch's body size: the group stops at its first match, so such a batch
 * skips its later body rules, and the function parses every byte as strict JSON instead.
 */
function blockingNamespace(key: string): CfnWebACL.StatementProperty {
  const batchBodySize: CfnWebACL.StatementProperty = {
    andStatement: {
      statements: [IS_BATCH, { labelMatchStatement: { scope: 'LABEL', key: CORE_RULE_SET_BODY_SIZE_LABEL } }],
    },
  };
  return {
    andStatement: {
      statements: [
        { labelMatchStatement: { scope: 'NAMESPACE', key } },
        { notStatement: { statement: batchBodySize } },
      ],
    },
  };
}

/** The Error bodies WAF answers with, by custom-response-body key. */
const FIREWALL_RESPONSES = {
  denied: {
    code: 'ACCESS_DENIED',
    message: 'The request was refused by the firewall.',
  },
  throttled: {
    code: 'THROTTLED',
    message: `Too many requests from this address; retry after ${RATE_WINDOW_SECONDS} seconds.`,
  },
  tooLarge: {
    code: 'PAYLOAD_TOO_LARGE',
    message: `The request body is larger than ${MAX_BODY_BYTES} bytes.`,
  },
} as const satisfies Record<string, { code: ErrorCode; message: string }>;

type ResponseKey = keyof typeof FIREWALL_RESPONSES;

/**
 * The web ACL: body size and per-IP rate first (cheap, with specific answers), then the AWS managed IP reputation
 * list and common rule set, counted and blocked by label. Every block answers with the spec's Error body.
 */
export class InventoryFirewall extends Construct {
  constructor(scope: Construct, id: string, props: InventoryFirewallProps) {
    super(scope, id);
    const visibility = (metricName: string) => ({
      cloudWatchMetricsEnabled: true,
      sampledRequestsEnabled: true,
      metricName,
    });
    const block = (key: ResponseKey, headers: Record<string, string> = {}): CfnWebACL.RuleActionProperty => ({
      block: {
        customResponse: {
          responseCode: ERROR_CODES[FIREWALL_RESPONSES[key].code],
          customResponseBodyKey: key,
          // WAF sets Content-Type from the body's content type and refuses it as a header. A browser reads the block
          // only with the CORS headers API Gateway's own answers carry.
          responseHeaders: Object.entries(gatewayResponseHeaders({ headers }, props.corsOrigins))
            .filter(([name]) => name.toLowerCase() !== 'content-type')
            .map(([name, value]) => {
              assertWafHeader(name, value);
              return { name, value };
            }),
        },
      },
    });
    const managedGroup = (name: string, priority: number): CfnWebACL.RuleProperty => ({
      name,
      priority,
      statement: { managedRuleGroupStatement: { vendorName: 'AWS', name } },
      overrideAction: { count: {} },
      visibilityConfig: visibility(name),
    });

    const webAcl = new CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      description: 'Pet store inventory: size, per-IP rate, IP reputation and common rules, answering Error bodies',
      visibilityConfig: visibility('PetStoreInventoryWebAcl'),
      customResponseBodies: Object.fromEntries(
        Object.entries(FIREWALL_RESPONSES).map(([key, { code, message }]) => [
          key,
          { contentType: 'APPLICATION_JSON', content: errorBody(code, message) },
        ]),
      ),
      rules: [
        {
          // The handlers refuse the same bodies with 413; this keeps them (up to API Gateway's 10 MB) from Lambda.
          name: 'BodyTooLarge',
          priority: 0,
          statement: {
            andStatement: {
              statements: [
                { notStatement: { statement: IS_BATCH } },
                {
                  sizeConstraintStatement: {
                    fieldToMatch: { body: { oversizeHandling: 'MATCH' } },
                    comparisonOperator: 'GT',
                    size: MAX_BODY_BYTES,
                    textTransformations: [{ priority: 0, type: 'NONE' }],
                  },
                },
              ],
            },
          },
          action: block('tooLarge'),
          visibilityConfig: visibility('BodyTooLarge'),
        },
        {
          name: 'RatePerIp',
          priority: 1,
          statement: {
            rateBasedStatement: {
              aggregateKeyType: 'IP',
              limit: props.requestsPerIpPerMinute,
              evaluationWindowSec: RATE_WINDOW_SECONDS,
            },
          },
          action: block('throttled', { 'Retry-After': String(RATE_WINDOW_SECONDS) }),
          visibilityConfig: visibility('RatePerIp'),
        },
        managedGroup('AWSManagedRulesAmazonIpReputationList', 2),
        managedGroup('AWSManagedRulesCommonRuleSet', 3),
        {
          name: 'BlockManagedRuleMatches',
          priority: 4,
          statement: {
            orStatement: {
              statements: [
                ...BLOCKING_MANAGED_LABELS.namespaces.map(blockingNamespace),
                ...BLOCKING_MANAGED_LABELS.labels.map((key) => ({ labelMatchStatement: { scope: 'LABEL', key } })),
              ],
            },
          },
          action: block('denied'),
          visibilityConfig: visibility('BlockManagedRuleMatches'),
        },
      ],
    });

    new CfnWebACLAssociation(this, 'StageAssociation', {
      resourceArn: props.stage.stageArn,
      webAclArn: webAcl.attrArn,
    });
  }
}
