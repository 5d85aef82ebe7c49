import { MAX_BATCH_BODY_BYTES, MAX_BODY_BYTES } from '../../functions/http/json-body';
import { BATCH_REQUEST, BLOCKING_IP_LIST_LABELS, RATE_WINDOW_SECONDS } from '../../infra/constructs/firewall';
import { stageConfig } from '../../infra/stage-config';
import { COMMON_HEADERS } from '../../service/common-headers';
import { type GatewayResponseType, gatewayCorsHeaders } from '../../service/gateway-responses';
import { API_STAGE_NAME, ROUTES } from '../../service/routes';
import { only, resourcesOfType, type SynthesizedApp, synthesizeBeforeAll } from './synth';
import {
  DEFAULT_API_GATEWAY_BODY_INSPECTION_LIMIT,
  evaluateWebAcl,
  MANAGED_RULE_GROUPS,
  type WafDecision,
  type WafRequest,
} from './waf-evaluation';

/**
 * What AWS WAF does with requests to production, evaluated offline from the synthesized web ACL by
 * test/infra/waf-evaluation.ts, whose header cites the AWS pages each behaviour below follows. The AWS managed rule
 * groups are AWS's code: a test names the managed rules a request would match, by their labels.
 */

const ORIGIN = 'https://staff.example.com';
const CRS = 'awswaf:managed:aws:core-rule-set:';
const IP_LIST = 'awswaf:managed:aws:amazon-ip-list:';

const synthesized = synthesizeBeforeAll();
// gateway-responses.test.ts's context (staging's origins do not reach production), so a run synthesizes it once.
const withCors = synthesizeBeforeAll({
  'staging:corsOrigins': `${ORIGIN},https://tools.example.com`,
  'production:corsOrigins': ORIGIN,
});

const webAcl = (app: SynthesizedApp = synthesized()) =>
  only(Object.values(resourcesOfType(app.templates.production, 'AWS::WAFv2::WebACL')));

/** A normal stock update from a well-behaved client; `overrides` changes what a test is about. */
function request(overrides: Partial<WafRequest> = {}): WafRequest {
  return {
    method: 'PATCH',
    path: '/v1/inventory/pet-1',
    headers: { 'User-Agent': 'inventory-client/1.0', 'Content-Type': 'application/json' },
    body: JSON.stringify({ quantity: 12 }),
    requestsFromIpInWindow: 1,
    ...overrides,
  };
}

const evaluate = (overrides: Partial<WafRequest> = {}, app?: SynthesizedApp): WafDecision =>
  evaluateWebAcl(webAcl(app), request(overrides));

const LIMIT = (() => {
  const firewall = stageConfig('production').firewall;
  if (!firewall) throw new Error('production has no firewall');
  return firewall.requestsPerIpPerMinute;
})();

describe('What WAF does with a request to production', () => {
  // "How AWS WAF handles rule and rule group actions": with no terminating match, the default action applies.
  it('lets a normal PATCH through to API Gateway by the default action, with no label and nothing counted', () => {
    expect(evaluate()).toEqual({ action: 'ALLOW', terminatingRule: 'Default_Action', counted: [], labels: [] });
  });

  // SizeConstraintStatement; "Custom responses for Block actions" (the custom response takes precedence).
  it('answers a body one byte over MAX_BODY_BYTES with 413 and the PAYLOAD_TOO_LARGE Error body, and lets MAX_BODY_BYTES through', () => {
    // Act
    const over = evaluate({ body: { bytes: MAX_BODY_BYTES + 1 } });
    const atLimit = evaluate({ body: 'x'.repeat(MAX_BODY_BYTES) });
    // Assess
    expect(over).toMatchObject({ action: 'BLOCK', terminatingRule: 'BodyTooLarge' });
    expect(over.response).toEqual({
      status: 413,
      headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
      body: {
        code: 'PAYLOAD_TOO_LARGE',
        message: `The request body is larger than ${MAX_BODY_BYTES} bytes.`,
        status: 413,
      },
    });
    expect(atLimit.action).toBe('ALLOW');
  });

  // Body.OversizeHandling and "Managing body inspection size limits": API Gateway forwards only the first 16 KB.
  it('still answers 413 for bodies past what API Gateway forwards to WAF (16 KB by default, and 10 MB), since oversize bodies MATCH', () => {
    for (const bytes of [DEFAULT_API_GATEWAY_BODY_INSPECTION_LIMIT + 1, 10 * 1024 * 1024]) {
      expect(evaluate({ body: { bytes } })).toMatchObject({
        action: 'BLOCK',
        terminatingRule: 'BodyTooLarge',
        response: { status: 413, body: { code: 'PAYLOAD_TOO_LARGE' } },
      });
    }
  });

  // The batch's body limit is its function's (docs/api.md, "Limits"): WAF must let it through, and only it.
  describe('POST /v1/inventory/changes, whose body may be 65,536 bytes', () => {
    const batch = (overrides: Partial<WafRequest> = {}) =>
      evaluate({ method: 'POST', path: '/v1/inventory/changes', body: { bytes: MAX_BATCH_BODY_BYTES }, ...overrides });

    it("is the batch route's method and path as WAF sees them, with the stage", () => {
      const route = ROUTES.find((candidate) => candidate.operationId === 'applyInventoryChanges');
      expect(BATCH_REQUEST).toEqual({ method: route?.method, uriPath: `/${API_STAGE_NAME}${route?.path}` });
    });

    const SIZE = `${CRS}SizeRestrictions_Body`;
    const KB = 1024;

    it('lets a clean batch of 65,536 bytes through to its function, the core rule set counting its size', () => {
      expect(batch()).toEqual({
        action: 'ALLOW',
        terminatingRule: 'Default_Action',
        counted: ['AWSManagedRulesCommonRuleSet'],
        labels: [SIZE],
      });
    });

    // The review's cases. "Baseline rule groups": SizeRestrictions_BODY (over 8 KB) comes before the body's XSS, LFI,
    // RFI and SSRF rules; "Rule group override options": only a rule-level override to Count lets the group go on
    // past it; "Managing body inspection size limits": API Gateway hands WAF 16 KB unless AssociationConfig says 64.
    it.each([
      ['a 9 KB', 9 * KB],
      ['a 60 KB', 60 * KB],
      ['a 65,536-byte', MAX_BATCH_BODY_BYTES],
    ])(
      'answers %s batch carrying an attack at its end with 403 ACCESS_DENIED, its size and attack labels both on it',
      (_, bytes) => {
        for (const rule of ['CrossSiteScripting_Body', 'GenericLFI_Body', 'GenericRFI_Body', 'EC2MetaDataSSRF_Body']) {
          const attack = `${CRS}${rule}`;
          expect(
            batch({ body: { bytes }, managedRuleMatches: [{ label: attack, atByte: bytes - 100 }] }),
          ).toMatchObject({
            action: 'BLOCK',
            terminatingRule: 'BlockManagedRuleMatches',
            labels: [SIZE, attack],
            response: { status: 403, body: { code: 'ACCESS_DENIED' } },
          });
        }
      },
    );

    it('lets a clean 60 KB batch through, only its size labelled', () => {
      expect(batch({ body: { bytes: 60 * KB } })).toMatchObject({ action: 'ALLOW', labels: [SIZE] });
    });

    it('answers a batch under 8 KB carrying an attack with 403, the attack its only label', () => {
      const attack = `${CRS}CrossSiteScripting_Body`;
      expect(batch({ body: { bytes: 2 * KB }, managedRuleMatches: [{ label: attack, atByte: 10 }] })).toMatchObject({
        action: 'BLOCK',
        labels: [attack],
        response: { status: 403 },
      });
    });

    // The function refuses a batch over 65,536 bytes with 413 (docs/api.md, "Limits"): WAF reads its first 64 KB.
    it('blocks a batch over 65,536 bytes with an attack in its first 64 KB, and leaves one past it to the function', () => {
      const bytes = MAX_BATCH_BODY_BYTES + 10 * KB;
      const attackAt = (atByte: number) =>
        batch({ body: { bytes }, managedRuleMatches: [{ label: `${CRS}CrossSiteScripting_Body`, atByte }] });
      expect(attackAt(MAX_BATCH_BODY_BYTES - 100).action).toBe('BLOCK');
      expect(attackAt(MAX_BATCH_BODY_BYTES + 100)).toMatchObject({ action: 'ALLOW', labels: [SIZE] });
    });

    // "Baseline rule groups": every rule of the core rule set but the body size's blocks the batch, so none that
    // firewall.ts names one by one for the batch is missing.
    it('answers a batch flagged by any core rule set rule but the body size rule with 403', () => {
      const rules = MANAGED_RULE_GROUPS.AWSManagedRulesCommonRuleSet?.rules ?? [];
      expect(rules).toHaveLength(22);
      for (const rule of rules.filter((candidate) => candidate.bodyOver === undefined)) {
        const label = `${CRS}${rule.label}`;
        const match = label.endsWith('_Body') ? { label, atByte: 0 } : label;
        expect({ label, action: batch({ body: { bytes: 100 }, managedRuleMatches: [match] }).action }).toEqual({
          label,
          action: 'BLOCK',
        });
      }
    });

    it.each([
      ['PATCH', '/v1/inventory/changes'],
      ['GET', '/v1/inventory/changes'],
      ['POST', '/v1/inventory'],
      ['POST', '/v1/inventory/changes/'],
      ['PATCH', '/v1/inventory/1'],
    ])('still answers 413 to a body over 4096 bytes sent as %s %s', (method, path) => {
      expect(evaluate({ method, path, body: { bytes: MAX_BODY_BYTES + 1 } })).toMatchObject({
        action: 'BLOCK',
        terminatingRule: 'BodyTooLarge',
        response: { status: 413 },
      });
    });

    it.each([`${CRS}NoUserAgent_Header`, `${IP_LIST}AWSManagedIPReputationList`])(
      'answers a batch labelled %s with 403 ACCESS_DENIED, as any other request',
      (label) => {
        expect(batch({ managedRuleMatches: [label] })).toMatchObject({
          action: 'BLOCK',
          terminatingRule: 'BlockManagedRuleMatches',
          response: { status: 403 },
        });
      },
    );
  });

  // "Rate-based rule high-level settings": the action applies to the requests beyond the limit in the window.
  it('answers an IP past its per-minute limit with 429, Retry-After and the THROTTLED Error body, and lets the limit-th request through', () => {
    // Act
    const last = evaluate({ requestsFromIpInWindow: LIMIT });
    const over = evaluate({ requestsFromIpInWindow: LIMIT + 1 });
    // Assess: the limit docs/deploying.md gives
    expect(LIMIT).toBe(600);
    expect(last.action).toBe('ALLOW');
    expect(over).toMatchObject({ action: 'BLOCK', terminatingRule: 'RatePerIp' });
    expect(over.response).toEqual({
      status: 429,
      headers: {
        'Content-Type': 'application/json',
        'Cache-Control': 'no-store',
        'Retry-After': String(RATE_WINDOW_SECONDS),
      },
      body: {
        code: 'THROTTLED',
        message: `Too many requests from this address; retry after ${RATE_WINDOW_SECONDS} seconds.`,
        status: 429,
      },
    });
  });

  // "How AWS WAF handles rule and rule group actions": the lowest priority number runs first and terminates.
  it('answers an oversized body from an IP past its limit with 413, not 429: the size rule runs first', () => {
    expect(evaluate({ body: { bytes: MAX_BODY_BYTES + 1 }, requestsFromIpInWindow: LIMIT + 1 })).toMatchObject({
      terminatingRule: 'BodyTooLarge',
      response: { status: 413 },
    });
  });

  // OverrideAction Count, "Labels on web requests", LabelMatchStatement; the groups' labels from "Baseline rule
  // groups" and "IP reputation rule groups".
  it.each([
    `${CRS}NoUserAgent_Header`,
    `${CRS}SizeRestrictions_QueryString`,
    `${CRS}GenericLFI_URIPath`,
    `${IP_LIST}AWSManagedIPReputationList`,
    `${IP_LIST}AWSManagedReconnaissanceList`,
  ])(
    'answers a request labelled %s with 403 ACCESS_DENIED and the Error body, the managed group only counting',
    (label) => {
      // Act
      const result = evaluate({ managedRuleMatches: [label] });
      // Assess
      expect(result).toMatchObject({ action: 'BLOCK', terminatingRule: 'BlockManagedRuleMatches', labels: [label] });
      expect(result.counted).toEqual([
        label.startsWith(CRS) ? 'AWSManagedRulesCommonRuleSet' : 'AWSManagedRulesAmazonIpReputationList',
      ]);
      expect(result.response).toEqual({
        status: 403,
        headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
        body: { code: 'ACCESS_DENIED', message: 'The request was refused by the firewall.', status: 403 },
      });
    },
  );

  // "IP reputation rule groups": AWSManagedIPDDoSList's own action is Count; firewall.ts leaves its label out.
  it("lets through a request only the IP list's DDoS rule labels, the label on the request and the group counted", () => {
    const ddos = `${IP_LIST}AWSManagedIPDDoSList`;
    expect(evaluate({ managedRuleMatches: [ddos] })).toEqual({
      action: 'ALLOW',
      terminatingRule: 'Default_Action',
      counted: ['AWSManagedRulesAmazonIpReputationList'],
      labels: [ddos],
    });
    expect([...BLOCKING_IP_LIST_LABELS]).not.toContain(ddos);
  });

  // "Overriding rule group actions": with the group's result overridden to Count, the group's first blocking rule
  // still ends the group's evaluation, so later rules of the group add no label (only a rule overridden to Count by
  // name lets the group go on, as the body size rule is).
  it('carries only the first blocking CRS rule label when several CRS rules match, and blocks on it', () => {
    const result = evaluate({
      managedRuleMatches: [`${CRS}NoUserAgent_Header`, `${CRS}SizeRestrictions_QueryString`],
    });
    expect(result).toMatchObject({ terminatingRule: 'BlockManagedRuleMatches', labels: [`${CRS}NoUserAgent_Header`] });
  });

  // "Custom responses for Block actions": a block's custom response replaces the protected resource's answers
  // (API Gateway's gateway responses), so it must carry the headers they carry itself.
  it.each([
    [413, 'REQUEST_TOO_LARGE', { body: { bytes: MAX_BODY_BYTES + 1 } }],
    [429, 'THROTTLED', { requestsFromIpInWindow: LIMIT + 1 }],
    [403, 'WAF_FILTERED', { managedRuleMatches: [`${CRS}NoUserAgent_Header`] }],
  ] as [number, GatewayResponseType, Partial<WafRequest>][])(
    'answers a %i block with the header names of the %s gateway response, CORS included, when one origin is configured',
    (status, type, overrides) => {
      // Prepare
      const gateway = Object.values(
        resourcesOfType(withCors().templates.production, 'AWS::ApiGateway::GatewayResponse'),
      ).find((props) => props.ResponseType === type) as { ResponseParameters: Record<string, string> };
      const gatewayHeaders = Object.fromEntries(
        Object.entries(gateway.ResponseParameters).map(([name, value]) => [
          name.replace('gatewayresponse.header.', '').toLowerCase(),
          value.slice(1, -1),
        ]),
      );
      // Act
      const response = evaluate(overrides, withCors()).response;
      const headers = Object.fromEntries(
        Object.entries(response?.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]),
      );
      // Assess
      expect(response?.status).toBe(status);
      expect(Object.keys(headers).sort()).toEqual(Object.keys(gatewayHeaders).sort());
      const lower = (record: Record<string, string>) =>
        Object.fromEntries(Object.entries(record).map(([name, value]) => [name.toLowerCase(), value]));
      expect(headers).toMatchObject(lower({ ...COMMON_HEADERS, ...gatewayCorsHeaders([ORIGIN]) }));
      // API Gateway's own 429 asks for a second; the firewall's for the rest of its window.
      if (status === 429) expect(headers['retry-after']).toBe(String(RATE_WINDOW_SECONDS));
    },
  );
});

describe('The WAF evaluator', () => {
  const block = { Block: { CustomResponse: { ResponseCode: 403 } } };
  const visibility = { SampledRequestsEnabled: false, CloudWatchMetricsEnabled: false, MetricName: 'm' };
  const crsGroup = (priority: number) => ({
    Name: 'AWSManagedRulesCommonRuleSet',
    Priority: priority,
    Statement: { ManagedRuleGroupStatement: { VendorName: 'AWS', Name: 'AWSManagedRulesCommonRuleSet' } },
    OverrideAction: { Count: {} },
    VisibilityConfig: visibility,
  });
  const labelRule = (priority: number) => ({
    Name: 'BlockCrs',
    Priority: priority,
    Statement: { LabelMatchStatement: { Scope: 'NAMESPACE', Key: CRS } },
    Action: block,
    VisibilityConfig: visibility,
  });
  const acl = (rules: unknown[]) => ({
    Scope: 'REGIONAL',
    DefaultAction: { Allow: {} },
    VisibilityConfig: visibility,
    Rules: rules,
  });
  const flagged = request({ managedRuleMatches: [`${CRS}NoUserAgent_Header`] });

  // LabelMatchStatement: "labels that have been added to the web request by rules that have already run".
  it('does not block on a label that a managed group adds after the label rule has run: labels reach later rules only', () => {
    // Act
    const before = evaluateWebAcl(acl([labelRule(0), crsGroup(1)]), flagged);
    const after = evaluateWebAcl(acl([crsGroup(0), labelRule(1)]), flagged);
    // Assess
    expect(before).toMatchObject({ action: 'ALLOW', terminatingRule: 'Default_Action' });
    expect(before.labels).toEqual([`${CRS}NoUserAgent_Header`]);
    expect(after).toMatchObject({ action: 'BLOCK', terminatingRule: 'BlockCrs', response: { status: 403 } });
  });

  // Body.OversizeHandling: CONTINUE inspects only what WAF was given, so a limit above it never matches.
  it('does not match an oversize body against a size above the inspection limit under CONTINUE, and does under MATCH', () => {
    const sizeRule = (oversize: string) => ({
      Name: 'Big',
      Priority: 0,
      Statement: {
        SizeConstraintStatement: {
          FieldToMatch: { Body: { OversizeHandling: oversize } },
          ComparisonOperator: 'GT',
          Size: 20_000,
          TextTransformations: [{ Priority: 0, Type: 'NONE' }],
        },
      },
      Action: block,
      VisibilityConfig: visibility,
    });
    const big = request({ body: { bytes: 30_000 } });
    expect(evaluateWebAcl(acl([sizeRule('CONTINUE')]), big).action).toBe('ALLOW');
    expect(evaluateWebAcl(acl([sizeRule('NO_MATCH')]), big).action).toBe('ALLOW');
    expect(evaluateWebAcl(acl([sizeRule('MATCH')]), big).action).toBe('BLOCK');
  });

  // "Rule group override options" and RuleActionOverride: a rule overridden to Count labels and lets the group go on;
  // an override naming no rule of a managed group (case counts) is silently ignored.
  it('runs the rules after one overridden to Count, and ignores an override whose rule name is not exact', () => {
    const withOverride = (Name: string) => {
      const group = crsGroup(0);
      const statement = {
        ...group.Statement.ManagedRuleGroupStatement,
        RuleActionOverrides: [{ Name, ActionToUse: { Count: {} } }],
      };
      return acl([{ ...group, Statement: { ManagedRuleGroupStatement: statement } }, labelRule(1)]);
    };
    const xss = { label: `${CRS}CrossSiteScripting_Body`, atByte: 9000 };
    const big = request({ body: { bytes: 9500 }, managedRuleMatches: [xss] });
    expect(evaluateWebAcl(withOverride('SizeRestrictions_BODY'), big).labels).toEqual([
      `${CRS}SizeRestrictions_Body`,
      xss.label,
    ]);
    expect(evaluateWebAcl(withOverride('SizeRestrictions_Body'), big).labels).toEqual([`${CRS}SizeRestrictions_Body`]);
    expect(evaluateWebAcl(acl([crsGroup(0)]), big).labels).toEqual([`${CRS}SizeRestrictions_Body`]);
  });

  // "Managing body inspection size limits": API Gateway hands WAF the first 16 KB unless AssociationConfig raises it.
  it('sees a body pattern only within the body inspection limit, 16 KB unless AssociationConfig raises it', () => {
    const at20k = request({
      body: { bytes: 30_000 },
      managedRuleMatches: [{ label: `${CRS}GenericLFI_Body`, atByte: 20_000 }],
    });
    const countingSize = crsGroup(0);
    const statement = {
      ...countingSize.Statement.ManagedRuleGroupStatement,
      RuleActionOverrides: [{ Name: 'SizeRestrictions_BODY', ActionToUse: { Count: {} } }],
    };
    const group = { ...countingSize, Statement: { ManagedRuleGroupStatement: statement } };
    const raised = (limit: string) => ({
      ...acl([group]),
      AssociationConfig: { RequestBody: { API_GATEWAY: { DefaultSizeInspectionLimit: limit } } },
    });
    const size = `${CRS}SizeRestrictions_Body`;
    expect(evaluateWebAcl(acl([group]), at20k).labels).toEqual([size]);
    expect(evaluateWebAcl(raised('KB_16'), at20k).labels).toEqual([size]);
    expect(evaluateWebAcl(raised('KB_32'), at20k).labels).toEqual([size, `${CRS}GenericLFI_Body`]);
  });

  it('refuses a request that names the body size rule or a body rule without where its pattern is', () => {
    expect(() =>
      evaluateWebAcl(acl([crsGroup(0)]), request({ managedRuleMatches: [`${CRS}SizeRestrictions_Body`] })),
    ).toThrow(/matched from the body's size/);
    expect(() =>
      evaluateWebAcl(acl([crsGroup(0)]), request({ managedRuleMatches: [`${CRS}CrossSiteScripting_Body`] })),
    ).toThrow(/says atByte/);
  });

  // ByteMatchStatement, PositionalConstraint EXACTLY: the whole field equals SearchString.
  it('matches a method and a URI path only when they are exactly the search string', () => {
    const exactly = (field: string, value: string) => ({
      ByteMatchStatement: {
        SearchString: value,
        FieldToMatch: { [field]: {} },
        PositionalConstraint: 'EXACTLY',
        TextTransformations: [{ Priority: 0, Type: 'NONE' }],
      },
    });
    const rule = (Statement: unknown) =>
      acl([{ Name: 'R', Priority: 0, Statement, Action: block, VisibilityConfig: visibility }]);
    const onPath = rule(exactly('UriPath', '/v1/inventory/changes'));
    const onMethod = rule(exactly('Method', 'POST'));
    expect(evaluateWebAcl(onPath, request({ path: '/v1/inventory/changes' })).action).toBe('BLOCK');
    expect(evaluateWebAcl(onPath, request({ path: '/v1/inventory/changes/x' })).action).toBe('ALLOW');
    expect(evaluateWebAcl(onMethod, request({ method: 'POST' })).action).toBe('BLOCK');
    expect(evaluateWebAcl(onMethod, request({ method: 'PATCH' })).action).toBe('ALLOW');
  });

  // The house rule of these evaluators: what is not understood throws rather than being judged by a guess.
  it('throws on a statement, field, action, managed group setting or managed label it does not model', () => {
    const withStatement = (Statement: unknown, Action: unknown = block) =>
      acl([{ Name: 'R', Priority: 0, Statement, Action, VisibilityConfig: visibility }]);
    const byteMatch = (FieldToMatch: unknown, PositionalConstraint = 'EXACTLY') => ({
      ByteMatchStatement: { SearchString: 'x', FieldToMatch, PositionalConstraint, TextTransformations: [] },
    });
    const uriSize = {
      SizeConstraintStatement: { FieldToMatch: { UriPath: {} }, ComparisonOperator: 'GT', Size: 1 },
    };
    const namespace = { LabelMatchStatement: { Scope: 'NAMESPACE', Key: CRS } };
    expect(() => evaluateWebAcl(withStatement(byteMatch({ UriPath: {} }, 'STARTS_WITH')), request())).toThrow(
      /PositionalConstraint STARTS_WITH is not understood/,
    );
    expect(() => evaluateWebAcl(withStatement(byteMatch({ QueryString: {} })), request())).toThrow(
      /ByteMatchStatement on QueryString is not understood/,
    );
    expect(() => evaluateWebAcl(withStatement(uriSize), request())).toThrow(/on UriPath is not understood/);
    expect(() => evaluateWebAcl(withStatement(namespace, { Captcha: {} }), request())).toThrow(
      /action Captcha is not understood/,
    );
    const scopedGroup = { ...crsGroup(0), OverrideAction: { Count: {} } };
    scopedGroup.Statement = {
      ManagedRuleGroupStatement: { VendorName: 'AWS', Name: 'AWSManagedRulesCommonRuleSet', Version: 'Version_1.0' },
    } as typeof scopedGroup.Statement;
    expect(() => evaluateWebAcl(acl([scopedGroup]), request())).toThrow(/Version not understood/);
    expect(() => evaluateWebAcl(acl([crsGroup(0)]), request({ managedRuleMatches: [`${CRS}NoSuchRule`] }))).toThrow(
      /is not a label of a rule of its group/,
    );
    expect(() =>
      evaluateWebAcl(acl([crsGroup(0)]), request({ managedRuleMatches: [`${IP_LIST}AWSManagedIPDDoSList`] })),
    ).toThrow(/no managed rule group of this web ACL adds/);
  });
});
