/**
 * What AWS WAF does with one request, offline, given a synthesized `AWS::WAFv2::WebACL` (its CloudFormation
 * properties): the tests feed it a request and read whether WAF allows or blocks it, which rule decided, the labels
 * the request carried, and for a block the HTTP answer, so they can ask what a client gets, not only what the template
 * holds. It follows the AWS WAF Developer Guide and API Reference:
 * - "How AWS WAF handles rule and rule group actions"
 *   (https://docs.aws.amazon.com/waf/latest/developerguide/web-acl-rule-actions.html): rules run in Priority order,
 *   lowest first; Allow and Block are terminating ("AWS WAF doesn't process any other rules … that come after the
 *   matching one"), Count is not ("counts the request, then continues processing the rules that follow"); when no
 *   rule terminates, the web ACL's default action applies.
 * - "Overriding rule group actions in AWS WAF"
 *   (https://docs.aws.amazon.com/waf/latest/developerguide/web-acl-rule-group-override-options.html) and the API's
 *   OverrideAction (https://docs.aws.amazon.com/waf/latest/APIReference/API_OverrideAction.html): an OverrideAction of
 *   Count changes the rule group's *result* to Count; it "does not affect how the rules in the rule group are
 *   evaluated": inside the group, "the first rule that matches a web request and that has a rule action of allow or
 *   block terminates the rule group evaluation", so its later rules add no label. A rule-level override
 *   (ManagedRuleGroupStatement RuleActionOverrides, https://docs.aws.amazon.com/waf/latest/APIReference/API_RuleActionOverride.html)
 *   to Count makes that one rule non-terminating: it still adds its label and the group goes on; "with managed rule
 *   groups, AWS WAF silently ignores any override that uses an invalid rule name", and so does the evaluator.
 * - "Labels on web requests" (https://docs.aws.amazon.com/waf/latest/developerguide/waf-labels.html), LabelMatchStatement
 *   (https://docs.aws.amazon.com/waf/latest/APIReference/API_LabelMatchStatement.html: "labels that have been added to
 *   the web request by rules that have already run in the web ACL") and "AWS WAF label match examples"
 *   (https://docs.aws.amazon.com/waf/latest/developerguide/waf-rule-label-match-examples.html): a managed rule group
 *   label matched with Scope LABEL "matches only the exact label"; Scope NAMESPACE with a key ending in `:` matches
 *   every label under that namespace. A label is visible only to rules that run after the rule that added it.
 * - The managed groups' rules, actions and labels: "Baseline rule groups", Core rule set
 *   (https://docs.aws.amazon.com/waf/latest/developerguide/aws-managed-rule-groups-baseline.html), and "IP reputation
 *   rule groups" (https://docs.aws.amazon.com/waf/latest/developerguide/aws-managed-rule-groups-ip-rep.html): every
 *   CRS rule blocks; in the Amazon IP reputation list, AWSManagedIPReputationList and AWSManagedReconnaissanceList
 *   block and AWSManagedIPDDoSList counts ("The rule's action is configured to Count in the rule group definition",
 *   https://docs.aws.amazon.com/waf/latest/developerguide/waf-rate-based-example-limit-labels.html).
 *   `SizeRestrictions_BODY` matches a body over 8 KB (8,192 bytes); the `_BODY` rules inspect the body only "up to the
 *   body size limit for the web ACL and resource type" (16 KB for API Gateway unless AssociationConfig raises it, to
 *   at most 64 KB) and go on with what they were given past it (oversize handling Continue).
 * - SizeConstraintStatement (https://docs.aws.amazon.com/waf/latest/APIReference/API_SizeConstraintStatement.html)
 *   with `FieldToMatch.Body` (https://docs.aws.amazon.com/waf/latest/APIReference/API_Body.html) and "Managing body
 *   inspection size limits for AWS WAF"
 *   (https://docs.aws.amazon.com/waf/latest/developerguide/web-acl-setting-body-inspection-limit.html): API Gateway
 *   forwards at most the first 16 KB (16,384 bytes) of a body by default (KB_16..KB_64 in the web ACL's
 *   AssociationConfig, https://docs.aws.amazon.com/waf/latest/APIReference/API_AssociationConfig.html); for a
 *   larger body, OversizeHandling MATCH treats the request as matching, NO_MATCH as not matching, CONTINUE (the
 *   default) inspects the contents WAF was given.
 * - "Rate-based rule high-level settings" and "Rate-based rule caveats"
 *   (https://docs.aws.amazon.com/waf/latest/developerguide/waf-rule-statement-type-rate-based-high-level-settings.html,
 *   https://docs.aws.amazon.com/waf/latest/developerguide/waf-rule-statement-type-rate-based-caveats.html): WAF counts
 *   each aggregation instance's (here: each IP's) requests over the evaluation window and applies the action to the
 *   requests beyond the limit. AWS documents the count as an estimate ("does not guarantee an exact limit match") and
 *   the block as starting late ("for up to several minutes before AWS WAF detects and rate limits them") and lasting
 *   after the rate falls ("Usually, this delay is below 30 seconds"). The evaluator takes the request's count at its
 *   word: the caller says how many requests WAF has counted from that IP in the window, this one included, and more
 *   than the limit blocks.
 * - ByteMatchStatement (https://docs.aws.amazon.com/waf/latest/APIReference/API_ByteMatchStatement.html) on
 *   `FieldToMatch.UriPath` ("the part of a web request that identifies a resource, for example
 *   /images/daily-ad.jpg") or `FieldToMatch.Method` ("the HTTP method … for example, POST"), PositionalConstraint
 *   EXACTLY ("the value of the specified part of the web request must exactly match the value of SearchString").
 * - "Custom responses for Block actions"
 *   (https://docs.aws.amazon.com/waf/latest/developerguide/customizing-the-response-for-blocked-requests.html): a
 *   Block's custom response (status, headers, a body from the web ACL's CustomResponseBodies) takes precedence over
 *   the protected resource's own responses; without one, the answer is WAF's default `403 (Forbidden)`. A custom
 *   header may be named anything but `content-type` (CustomHTTPHeader,
 *   https://docs.aws.amazon.com/waf/latest/APIReference/API_CustomHTTPHeader.html); a body's ContentType is
 *   TEXT_PLAIN, TEXT_HTML or APPLICATION_JSON (https://docs.aws.amazon.com/waf/latest/APIReference/API_CustomResponseBody.html).
 *
 * Not published, so chosen and stated: what the AWS managed rule groups' patterns match is AWS's own code, so the
 * caller names the managed rules whose pattern the request holds, by their labels, and for a body rule the byte where
 * the pattern starts; the evaluator decides which of them WAF sees (a body pattern past the inspection limit is not
 * seen), adds the body size rule's match from the body's size itself, and runs the group's rules in the order of the
 * tables on the pages above, stopping at the first whose action (after overrides) blocks. The Content-Type a custom
 * body is sent with (`application/json` for APPLICATION_JSON, and so on) is the obvious reading of the enum, not a
 * documented table. CONTINUE compares the size of the inspected
 * part (at most the inspection limit). The name `Default_Action` for "no rule terminated" is WAF's log vocabulary,
 * used here as a name only. Only what these stacks use is understood: any other statement, field, action or setting
 * throws, so a new kind of rule cannot be judged by a guess.
 */

/** One request as the web ACL sees it. */
export interface WafRequest {
  method: string;
  path: string;
  headers?: Readonly<Record<string, string>>;
  /** The body (its UTF-8 bytes are counted), or only its length in bytes. @default no body */
  body?: string | { bytes: number };
  /**
   * Requests WAF has counted from this request's source IP in the rate-based rule's evaluation window, this one
   * included. @default 1
   */
  requestsFromIpInWindow?: number;
  /**
   * The AWS managed rules whose pattern this request holds, by their fully qualified labels (for example
   * `awswaf:managed:aws:core-rule-set:NoUserAgent_Header`); a body rule's (`…_Body`) with the byte of the body where
   * its pattern starts. The body size rule is not named: the evaluator matches it from the body's size.
   * @default none
   */
  managedRuleMatches?: readonly (string | { label: string; atByte: number })[];
}

/** WAF's answer to a blocked request. */
export interface WafResponse {
  status: number;
  /** Header names as configured; `Content-Type` from the custom body's content type. */
  headers: Record<string, string>;
  /** The parsed JSON body, the text of another body, or undefined without one. */
  body: unknown;
}

/** What the web ACL decided. */
export interface WafDecision {
  action: 'ALLOW' | 'BLOCK';
  /** The rule whose Allow or Block ended the evaluation, or `Default_Action`. */
  terminatingRule: string;
  /** Rules (and rule groups) that matched with a Count, in evaluation order. */
  counted: string[];
  /** Every label the request carried when evaluation ended. */
  labels: string[];
  /** The answer of a block; undefined when the request goes on to API Gateway. */
  response?: WafResponse;
}

type Json = Record<string, unknown>;

/** A managed group's rule: its name (what RuleActionOverrides names), its label after the namespace, its action. */
export interface ManagedRule {
  name: string;
  label: string;
  action: 'Block' | 'Count';
  /** A body size rule: it matches a body over this many bytes. */
  bodyOver?: number;
}

const blocking = (name: string, label: string): ManagedRule => ({ name, label, action: 'Block' });

/** The AWS managed rule groups understood here, each with its rules in the group's order. */
export const MANAGED_RULE_GROUPS: Readonly<Record<string, { namespace: string; rules: readonly ManagedRule[] }>> = {
  AWSManagedRulesAmazonIpReputationList: {
    namespace: 'awswaf:managed:aws:amazon-ip-list:',
    rules: [
      blocking('AWSManagedIPReputationList', 'AWSManagedIPReputationList'),
      blocking('AWSManagedReconnaissanceList', 'AWSManagedReconnaissanceList'),
      { name: 'AWSManagedIPDDoSList', label: 'AWSManagedIPDDoSList', action: 'Count' },
    ],
  },
  AWSManagedRulesCommonRuleSet: {
    namespace: 'awswaf:managed:aws:core-rule-set:',
    rules: [
      blocking('NoUserAgent_HEADER', 'NoUserAgent_Header'),
      blocking('UserAgent_BadBots_HEADER', 'BadBots_Header'),
      blocking('SizeRestrictions_QUERYSTRING', 'SizeRestrictions_QueryString'),
      blocking('SizeRestrictions_Cookie_HEADER', 'SizeRestrictions_Cookie_Header'),
      { ...blocking('SizeRestrictions_BODY', 'SizeRestrictions_Body'), bodyOver: 8 * 1024 },
      blocking('SizeRestrictions_URIPATH', 'SizeRestrictions_URIPath'),
      blocking('EC2MetaDataSSRF_BODY', 'EC2MetaDataSSRF_Body'),
      blocking('EC2MetaDataSSRF_COOKIE', 'EC2MetaDataSSRF_Cookie'),
      blocking('EC2MetaDataSSRF_URIPATH', 'EC2MetaDataSSRF_URIPath'),
      blocking('EC2MetaDataSSRF_QUERYARGUMENTS', 'EC2MetaDataSSRF_QueryArguments'),
      blocking('GenericLFI_QUERYARGUMENTS', 'GenericLFI_QueryArguments'),
      blocking('GenericLFI_URIPATH', 'GenericLFI_URIPath'),
      blocking('GenericLFI_BODY', 'GenericLFI_Body'),
      blocking('RestrictedExtensions_URIPATH', 'RestrictedExtensions_URIPath'),
      blocking('RestrictedExtensions_QUERYARGUMENTS', 'RestrictedExtensions_QueryArguments'),
      blocking('GenericRFI_QUERYARGUMENTS', 'GenericRFI_QueryArguments'),
      blocking('GenericRFI_BODY', 'GenericRFI_Body'),
      blocking('GenericRFI_URIPATH', 'GenericRFI_URIPath'),
      blocking('CrossSiteScripting_COOKIE', 'CrossSiteScripting_Cookie'),
      blocking('CrossSiteScripting_QUERYARGUMENTS', 'CrossSiteScripting_QueryArguments'),
      blocking('CrossSiteScripting_BODY', 'CrossSiteScripting_Body'),
      blocking('CrossSiteScripting_URIPATH', 'CrossSiteScripting_URIPath'),
    ],
  },
};

/** API Gateway's body inspection limit by AssociationConfig setting; 16 KB when none is set. */
const BODY_INSPECTION_LIMITS: Readonly<Record<string, number>> = {
  KB_16: 16 * 1024,
  KB_32: 32 * 1024,
  KB_48: 48 * 1024,
  KB_64: 64 * 1024,
};
export const DEFAULT_API_GATEWAY_BODY_INSPECTION_LIMIT = 16 * 1024;

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  APPLICATION_JSON: 'application/json',
  TEXT_PLAIN: 'text/plain',
  TEXT_HTML: 'text/html',
};

/** Throws unless `value` is an object holding only `allowed` keys. */
function fieldsOf(value: unknown, allowed: readonly string[], what: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${what} is not an object`);
  const unknown = Object.keys(value).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) throw new Error(`${what}: ${unknown.join(', ')} not understood`);
  return value as Json;
}

/** The one key of an object such as `{ Block: {...} }` or a statement. */
function oneKey(value: unknown, what: string): [string, unknown] {
  const entries = Object.entries((value ?? {}) as Json);
  if (entries.length !== 1) throw new Error(`${what} must hold exactly one entry, holds ${entries.length}`);
  return entries[0] as [string, unknown];
}

type Context = {
  request: WafRequest;
  bodyBytes: number;
  inspectionLimit: number;
  /** The managed rules' labels whose pattern WAF sees in the request (a body pattern only within the limit). */
  seen: ReadonlySet<string>;
  labels: string[];
};

/** Evaluates one request against a web ACL's CloudFormation properties. */
export function evaluateWebAcl(webAcl: Record<string, unknown>, request: WafRequest): WafDecision {
  const acl = fieldsOf(
    webAcl,
    [
      'Name',
      'Scope',
      'DefaultAction',
      'Description',
      'VisibilityConfig',
      'CustomResponseBodies',
      'Rules',
      'AssociationConfig',
    ],
    'web ACL',
  );
  if (acl.Scope !== 'REGIONAL') throw new Error(`Scope ${String(acl.Scope)} is not understood (API Gateway: REGIONAL)`);
  const bodies = (acl.CustomResponseBodies ?? {}) as Json;
  const rules = [...((acl.Rules ?? []) as Json[])].sort((a, b) => (a.Priority as number) - (b.Priority as number));
  const priorities = rules.map((rule) => rule.Priority);
  if (new Set(priorities).size !== priorities.length) throw new Error('rule priorities must all be different');
  const groupsInAcl = rules.flatMap((rule) => {
    const statement = (rule.Statement as Json | undefined)?.ManagedRuleGroupStatement as Json | undefined;
    const group = statement && MANAGED_RULE_GROUPS[statement.Name as string];
    return group ? [group] : [];
  });
  const bytes = bodyBytes(request.body);
  const limit = inspectionLimit(acl.AssociationConfig);
  const context: Context = {
    request,
    bodyBytes: bytes,
    inspectionLimit: limit,
    seen: seenManagedPatterns(request, groupsInAcl, bytes, limit),
    labels: [],
  };
  const counted: string[] = [];

  // Every rule, action and statement is read before any request is judged, so what is not understood throws even
  // where an earlier rule would have terminated.
  const compiled = rules.map((rule) => compileRule(rule, bodies));
  const defaultAction = compileAction(acl.DefaultAction, bodies, 'DefaultAction');
  if (defaultAction.kind === 'Count') throw new Error('a default action is Allow or Block');
  const scratch: Context = { ...context, labels: [] };
  for (const rule of compiled) if (rule.kind === 'rule') matches(rule.statement, scratch, rule.name);

  for (const rule of compiled) {
    if (rule.kind === 'group') {
      const result = runManagedGroup(rule.group, context);
      if (result === undefined) continue;
      // The group's Block stands with None: a managed rule has no custom response, so WAF's default 403.
      if (result === 'Block' && rule.override === 'None')
        return decision('BLOCK', rule.name, counted, context, { status: 403, headers: {}, body: undefined });
      counted.push(rule.name);
      continue;
    }
    if (!matches(rule.statement, context, rule.name)) continue;
    if (rule.action.kind === 'Count') counted.push(rule.name);
    else return decision(rule.action.kind, rule.name, counted, context, rule.action.response);
  }
  return decision(defaultAction.kind, 'Default_Action', counted, context, defaultAction.response);
}

type CompiledAction =
  | { kind: 'Count' }
  | { kind: 'ALLOW'; response?: undefined }
  | { kind: 'BLOCK'; response: WafResponse };
type CompiledRule =
  | { kind: 'group'; name: string; group: ManagedGroup; override: 'Count' | 'None' }
  | { kind: 'rule'; name: string; statement: unknown; action: CompiledAction };

function compileRule(candidate: Json, bodies: Json): CompiledRule {
  const rule = fieldsOf(
    candidate,
    ['Name', 'Priority', 'Statement', 'Action', 'OverrideAction', 'VisibilityConfig'],
    `rule ${String(candidate.Name)}`,
  );
  const name = rule.Name as string;
  const [statementType, statement] = oneKey(rule.Statement, `rule ${name}'s statement`);
  if (statementType === 'ManagedRuleGroupStatement') {
    if (rule.Action !== undefined) throw new Error(`rule ${name}: a rule group takes OverrideAction, not Action`);
    const group = managedGroup(statement, name);
    const [override, settings] = oneKey(rule.OverrideAction, `rule ${name}'s OverrideAction`);
    if (override !== 'Count' && override !== 'None')
      throw new Error(`rule ${name}: OverrideAction ${override} is not understood`);
    fieldsOf(settings, [], `rule ${name}'s OverrideAction ${override}`);
    return { kind: 'group', name, group, override };
  }
  if (rule.OverrideAction !== undefined) throw new Error(`rule ${name}: OverrideAction is for rule groups only`);
  return { kind: 'rule', name, statement: rule.Statement, action: compileAction(rule.Action, bodies, name) };
}

function compileAction(value: unknown, bodies: Json, name: string): CompiledAction {
  const [action, settings] = oneKey(value, `${name}'s action`);
  switch (action) {
    case 'Count':
      fieldsOf(settings, [], `${name}'s Count`);
      return { kind: 'Count' };
    case 'Allow':
      // CustomRequestHandling (headers inserted into the request) is not modelled.
      fieldsOf(settings, [], `${name}'s Allow`);
      return { kind: 'ALLOW' };
    case 'Block':
      return { kind: 'BLOCK', response: blockResponse(settings, bodies, name) };
    default:
      throw new Error(`${name}: action ${action} is not understood`);
  }
}

function decision(
  action: WafDecision['action'],
  terminatingRule: string,
  counted: string[],
  context: Context,
  response?: WafResponse,
): WafDecision {
  return { action, terminatingRule, counted, labels: [...context.labels], ...(response ? { response } : {}) };
}

function bodyBytes(body: WafRequest['body']): number {
  if (body === undefined) return 0;
  if (typeof body === 'string') return Buffer.byteLength(body, 'utf8');
  return body.bytes;
}

function inspectionLimit(associationConfig: unknown): number {
  if (associationConfig === undefined) return DEFAULT_API_GATEWAY_BODY_INSPECTION_LIMIT;
  const config = fieldsOf(associationConfig, ['RequestBody'], 'AssociationConfig');
  const perType = (config.RequestBody ?? {}) as Json;
  const apiGateway = perType.API_GATEWAY;
  if (apiGateway === undefined) return DEFAULT_API_GATEWAY_BODY_INSPECTION_LIMIT;
  const setting = fieldsOf(apiGateway, ['DefaultSizeInspectionLimit'], 'AssociationConfig API_GATEWAY')
    .DefaultSizeInspectionLimit as string;
  const limit = BODY_INSPECTION_LIMITS[setting];
  if (limit === undefined) throw new Error(`DefaultSizeInspectionLimit ${setting} is not understood`);
  return limit;
}

type ManagedGroup = {
  name: string;
  namespace: string;
  rules: readonly ManagedRule[];
  /** RuleActionOverrides by rule name: the action used in place of the rule's own. */
  overrides: ReadonlyMap<string, 'Count'>;
};

function managedGroup(statement: unknown, ruleName: string): ManagedGroup {
  // Version, ExcludedRules, ScopeDownStatement and ManagedRuleGroupConfigs are not modelled.
  const { VendorName, Name, RuleActionOverrides } = fieldsOf(
    statement,
    ['VendorName', 'Name', 'RuleActionOverrides'],
    `rule ${ruleName}'s ManagedRuleGroupStatement`,
  );
  const known = VendorName === 'AWS' ? MANAGED_RULE_GROUPS[Name as string] : undefined;
  if (!known) throw new Error(`managed rule group ${String(VendorName)}/${String(Name)} is not understood`);
  const overrides = new Map<string, 'Count'>();
  for (const override of (RuleActionOverrides ?? []) as unknown[]) {
    const { Name: rule, ActionToUse } = fieldsOf(override, ['Name', 'ActionToUse'], `rule ${ruleName}'s override`);
    const [action, settings] = oneKey(ActionToUse, `rule ${ruleName}'s override of ${String(rule)}`);
    if (action !== 'Count') throw new Error(`rule ${ruleName}: an override to ${action} is not understood`);
    fieldsOf(settings, [], `rule ${ruleName}'s override of ${String(rule)}`);
    // An override naming no rule of the group is silently ignored ("RuleActionOverride"), by name, case and all.
    if (known.rules.some((candidate) => candidate.name === rule)) overrides.set(rule as string, 'Count');
  }
  return { name: Name as string, ...known, overrides };
}

/**
 * The labels of the managed rules whose pattern WAF sees in the request: each named rule must be one of a group of the
 * web ACL, a body rule's with where its pattern starts, which WAF sees only within the inspection limit.
 */
function seenManagedPatterns(
  request: WafRequest,
  groups: readonly { namespace: string; rules: readonly ManagedRule[] }[],
  bodyBytes: number,
  inspectionLimit: number,
): Set<string> {
  const seen = new Set<string>();
  for (const match of request.managedRuleMatches ?? []) {
    const { label, atByte } = typeof match === 'string' ? { label: match, atByte: undefined } : match;
    const group = groups.find((candidate) => label.startsWith(candidate.namespace));
    if (!group) throw new Error(`no managed rule group of this web ACL adds ${label}: the request cannot carry it`);
    const rule = group.rules.find((candidate) => group.namespace + candidate.label === label);
    if (!rule) throw new Error(`${label} is not a label of a rule of its group`);
    if (rule.bodyOver !== undefined) throw new Error(`${label} is matched from the body's size, not named`);
    const bodyRule = label.endsWith('_Body');
    if (bodyRule !== (atByte !== undefined)) throw new Error(`${label}: a body rule's match, and only it, says atByte`);
    if (atByte !== undefined && !(atByte >= 0 && atByte < bodyBytes))
      throw new Error(`${label}: byte ${atByte} is not in a body of ${bodyBytes} bytes`);
    if (atByte === undefined || atByte < inspectionLimit) seen.add(label);
  }
  return seen;
}

/**
 * Runs a managed group as WAF does: its rules in order, each that matches adding its label, up to the first whose
 * action (after RuleActionOverrides) blocks, which ends the group. Returns the group's result: Block, Count, or
 * undefined (no match).
 */
function runManagedGroup(group: ManagedGroup, context: Context): 'Block' | 'Count' | undefined {
  let result: 'Block' | 'Count' | undefined;
  for (const rule of group.rules) {
    const label = group.namespace + rule.label;
    const matched =
      rule.bodyOver === undefined
        ? context.seen.has(label)
        : Math.min(context.bodyBytes, context.inspectionLimit) > rule.bodyOver;
    if (!matched) continue;
    context.labels.push(label);
    result = group.overrides.get(rule.name) ?? rule.action;
    if (result === 'Block') break;
  }
  return result;
}

function matches(statement: unknown, context: Context, ruleName: string): boolean {
  const [type, body] = oneKey(statement, `rule ${ruleName}'s statement`);
  switch (type) {
    case 'OrStatement': {
      const { Statements } = fieldsOf(body, ['Statements'], 'OrStatement');
      return (Statements as unknown[]).map((inner) => matches(inner, context, ruleName)).some(Boolean);
    }
    case 'AndStatement': {
      const { Statements } = fieldsOf(body, ['Statements'], 'AndStatement');
      return (Statements as unknown[]).map((inner) => matches(inner, context, ruleName)).every(Boolean);
    }
    case 'NotStatement': {
      const { Statement } = fieldsOf(body, ['Statement'], 'NotStatement');
      return !matches(Statement, context, ruleName);
    }
    case 'LabelMatchStatement':
      return labelMatches(body, context.labels);
    case 'SizeConstraintStatement':
      return sizeMatches(body, context);
    case 'ByteMatchStatement':
      return bytesMatch(body, context);
    case 'RateBasedStatement':
      return rateExceeded(body, context);
    default:
      throw new Error(`rule ${ruleName}: ${type} is not understood`);
  }
}

function labelMatches(statement: unknown, labels: readonly string[]): boolean {
  const { Scope, Key } = fieldsOf(statement, ['Scope', 'Key'], 'LabelMatchStatement');
  const key = Key as string;
  // A key without the `awswaf:` prefix is matched in the rule's own context (account and web ACL name): not modelled.
  if (!key.startsWith('awswaf:')) throw new Error(`label key ${key} is not fully qualified: not understood`);
  if (Scope === 'LABEL') return labels.includes(key);
  if (Scope === 'NAMESPACE') {
    if (!key.endsWith(':')) throw new Error(`namespace key ${key} does not end with ':': not understood`);
    return labels.some((label) => label.startsWith(key));
  }
  throw new Error(`LabelMatchStatement Scope ${String(Scope)} is not understood`);
}

function sizeMatches(statement: unknown, context: Context): boolean {
  const { FieldToMatch, ComparisonOperator, Size, TextTransformations } = fieldsOf(
    statement,
    ['FieldToMatch', 'ComparisonOperator', 'Size', 'TextTransformations'],
    'SizeConstraintStatement',
  );
  const [field, settings] = oneKey(FieldToMatch, 'FieldToMatch');
  if (field !== 'Body') throw new Error(`SizeConstraintStatement on ${field} is not understood`);
  const transformations = (TextTransformations ?? []) as Json[];
  if (transformations.some((transformation) => transformation.Type !== 'NONE'))
    throw new Error('text transformations other than NONE are not understood');
  const oversize =
    (fieldsOf(settings, ['OversizeHandling'], 'Body').OversizeHandling as string | undefined) ?? 'CONTINUE';
  let size = context.bodyBytes;
  if (size > context.inspectionLimit) {
    if (oversize === 'MATCH') return true;
    if (oversize === 'NO_MATCH') return false;
    if (oversize !== 'CONTINUE') throw new Error(`OversizeHandling ${oversize} is not understood`);
    size = context.inspectionLimit;
  }
  const limit = Size as number;
  switch (ComparisonOperator) {
    case 'EQ':
      return size === limit;
    case 'NE':
      return size !== limit;
    case 'LE':
      return size <= limit;
    case 'LT':
      return size < limit;
    case 'GE':
      return size >= limit;
    case 'GT':
      return size > limit;
    default:
      throw new Error(`ComparisonOperator ${String(ComparisonOperator)} is not understood`);
  }
}

function bytesMatch(statement: unknown, context: Context): boolean {
  const { FieldToMatch, PositionalConstraint, SearchString, TextTransformations } = fieldsOf(
    statement,
    ['FieldToMatch', 'PositionalConstraint', 'SearchString', 'TextTransformations'],
    'ByteMatchStatement',
  );
  const [field, settings] = oneKey(FieldToMatch, 'FieldToMatch');
  fieldsOf(settings, [], `FieldToMatch ${field}`);
  if (((TextTransformations ?? []) as Json[]).some((transformation) => transformation.Type !== 'NONE'))
    throw new Error('text transformations other than NONE are not understood');
  if (PositionalConstraint !== 'EXACTLY')
    throw new Error(`PositionalConstraint ${String(PositionalConstraint)} is not understood`);
  if (field === 'UriPath') return context.request.path === SearchString;
  if (field === 'Method') return context.request.method === SearchString;
  throw new Error(`ByteMatchStatement on ${field} is not understood`);
}

function rateExceeded(statement: unknown, context: Context): boolean {
  // ScopeDownStatement, ForwardedIPConfig and CustomKeys are not modelled.
  const { AggregateKeyType, Limit, EvaluationWindowSec } = fieldsOf(
    statement,
    ['AggregateKeyType', 'Limit', 'EvaluationWindowSec'],
    'RateBasedStatement',
  );
  if (AggregateKeyType !== 'IP') throw new Error(`AggregateKeyType ${String(AggregateKeyType)} is not understood`);
  if (![undefined, 60, 120, 300, 600].includes(EvaluationWindowSec as number | undefined))
    throw new Error(`EvaluationWindowSec ${String(EvaluationWindowSec)} is not a documented window`);
  const count = context.request.requestsFromIpInWindow ?? 1;
  return count > (Limit as number);
}

function blockResponse(settings: unknown, bodies: Json, ruleName: string): WafResponse {
  const { CustomResponse } = fieldsOf(settings, ['CustomResponse'], `${ruleName}'s Block`);
  if (CustomResponse === undefined) return { status: 403, headers: {}, body: undefined };
  const { ResponseCode, CustomResponseBodyKey, ResponseHeaders } = fieldsOf(
    CustomResponse,
    ['ResponseCode', 'CustomResponseBodyKey', 'ResponseHeaders'],
    `${ruleName}'s CustomResponse`,
  );
  const headers: Record<string, string> = {};
  for (const header of (ResponseHeaders ?? []) as Json[]) {
    const { Name, Value } = fieldsOf(header, ['Name', 'Value'], `${ruleName}'s response header`);
    const name = Name as string;
    if (name.toLowerCase() === 'content-type') throw new Error(`${ruleName}: WAF refuses a content-type header`);
    if (Object.keys(headers).some((other) => other.toLowerCase() === name.toLowerCase()))
      throw new Error(`${ruleName}: duplicate response header ${name}`);
    headers[name] = Value as string;
  }
  let body: unknown;
  if (CustomResponseBodyKey !== undefined) {
    const key = CustomResponseBodyKey as string;
    if (!(key in bodies)) throw new Error(`${ruleName}: no custom response body ${key}`);
    const { Content, ContentType } = fieldsOf(bodies[key], ['Content', 'ContentType'], `custom response body ${key}`);
    const contentType = CONTENT_TYPES[ContentType as string];
    if (!contentType) throw new Error(`custom response body content type ${String(ContentType)} is not understood`);
    headers['Content-Type'] = contentType;
    body = ContentType === 'APPLICATION_JSON' ? JSON.parse(Content as string) : Content;
  }
  return { status: ResponseCode as number, headers, body };
}
