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
 * The IP reputation list's labels that mean "block" (the groups only count, so that our own rule blocks with the Error
 * body: a managed rule's Block has no custom response). Its DDoS rule only counts by design.
 */
export const BLOCKING_IP_LIST_LABELS = [
  'awswaf:managed:aws:amazon-ip-list:AWSManagedIPReputationList',
  'awswaf:managed:aws:amazon-ip-list:AWSManagedReconnaissanceList',
] as const;

/**
 * `POST /inventory/changes` as WAF sees it (with the stage): 100 changes are far over the PATCH's 4096 bytes, so its
 * body is exempt from both size rules (ours, the core rule set's 8 KB); its function refuses one over 65,536 bytes.
 */
export const BATCH_REQUEST = { method: 'POST', uriPath: `/${API_STAGE_NAME}/inventory/changes` } as const;

/** The core rule set's body size rule ("Baseline rule groups": a body over 8 KB), counted so the group goes on. */
const CORE_RULE_SET_BODY_SIZE_RULE = 'SizeRestrictions_BODY';

const CORE_RULE_SET = 'awswaf:managed:aws:core-rule-set:';

/**
 * The core rule set's labels but its body size rule's ("Baseline rule groups"): what blocks a batch, whose size alone
 * must not. WAF cannot match "a namespace but one label", so they are named; a rule AWS adds blocks other requests
 * through the namespace, and a batch once named here.
 */
const CORE_RULE_SET_LABELS_BUT_BODY_SIZE = [
  'NoUserAgent_Header',
  'BadBots_Header',
  'SizeRestrictions_QueryString',
  'SizeRestrictions_Cookie_Header',
  'SizeRestrictions_URIPath',
  'EC2MetaDataSSRF_Body',
  'EC2MetaDataSSRF_Cookie',
  'EC2MetaDataSSRF_URIPath',
  'EC2MetaDataSSRF_QueryArguments',
  'GenericLFI_QueryArguments',
  'GenericLFI_URIPath',
  'GenericLFI_Body',
  'RestrictedExtensions_URIPath',
  'RestrictedExtensions_QueryArguments',
  'GenericRFI_QueryArguments',
  'GenericRFI_Body',
  'GenericRFI_URIPath',
  'CrossSiteScripting_Cookie',
  'CrossSiteScripting_QueryArguments',
  'CrossSiteScripting_Body',
  'CrossSiteScripting_URIPath',
].map((rule) => `${CORE_RULE_SET}${rule}`);

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

const label = (key: string): CfnWebACL.StatementProperty => ({ labelMatchStatement: { scope: 'LABEL', key } });

/**
 * A request the core rule set flagged: any of its labels on a request other than the batch, and on the batch any but
 * the body size's (its body may be 65,536 bytes).
 */
const CORE_RULE_SET_MATCH: CfnWebACL.StatementProperty = {
  orStatement: {
    statements: [
      {
        andStatement: {
          statements: [
            { labelMatchStatement: { scope: 'NAMESPACE', key: CORE_RULE_SET } },
            { notStatement: { statement: IS_BATCH } },
          ],
        },
      },
      {
        andStatement: {
          statements: [IS_BATCH, { orStatement: { statements: CORE_RULE_SET_LABELS_BUT_BODY_SIZE.map(label) } }],
        },
      },
    ],
  },
};

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
    const managedGroup = (
      name: string,
      priority: number,
      countedRules: readonly string[] = [],
    ): CfnWebACL.RuleProperty => ({
      name,
      priority,
      statement: {
        managedRuleGroupStatement: {
          vendorName: 'AWS',
          name,
          ...(countedRules.length > 0 && {
            ruleActionOverrides: countedRules.map((rule) => ({ name: rule, actionToUse: { count: {} } })),
          }),
        },
      },
      // The group's result only counts; inside it a rule that blocks still ends its evaluation ("Rule group override
      // options"), so a rule whose match must not hide the rules after it is counted by name.
      overrideAction: { count: {} },
      visibilityConfig: visibility(name),
    });

    const webAcl = new CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      description: 'Pet store inventory: size, per-IP rate, IP reputation and common rules, answering Error bodies',
      visibilityConfig: visibility('PetStoreInventoryWebAcl'),
      // The core rule set's body rules read a body up to this limit (16 KB unless raised): the batch's whole 64 KiB.
      associationConfig: { requestBody: { API_GATEWAY: { defaultSizeInspectionLimit: 'KB_64' } } },
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
        managedGroup('AWSManagedRulesCommonRuleSet', 3, [CORE_RULE_SET_BODY_SIZE_RULE]),
        {
          name: 'BlockManagedRuleMatches',
          priority: 4,
          statement: {
            orStatement: {
              statements: [CORE_RULE_SET_MATCH, ...BLOCKING_IP_LIST_LABELS.map(label)],
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
