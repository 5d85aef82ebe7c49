import { readFileSync } from 'node:fs';
import { ENV } from '../../functions/config';
import { functionId, InventoryStack } from '../../infra/inventory-stack';
import {
  assertComplete,
  assertDeployable,
  contextLookup,
  DEFAULT_REGION,
  listReadPace,
  missingSettings,
  PLACEHOLDER_ACCOUNT,
  STAGES,
  type StageName,
  stageConfig,
} from '../../infra/stage-config';
import { STACK_OUTPUTS, stackName } from '../../service/names';
import { ROUTES } from '../../service/routes';
import { runProcess } from '../helpers/process';
import { buildApp, functionEnvironment, logicalIdStartingWith, resourcesOfType, synthesizeBeforeAll } from './synth';

/** A stage's settings as the app reads them from these context values and environment variables. */
function configFrom(stage: StageName, context: Record<string, string> = {}, env: Record<string, string> = {}) {
  return stageConfig(
    stage,
    contextLookup((key) => context[key], env),
  );
}

describe('Stage configuration', () => {
  it("paces the list at half the list index's read cap, in whole units even for an odd cap", () => {
    expect(listReadPace(4000)).toBe(2000);
    expect(listReadPace(1001)).toBe(500);
    for (const stage of STAGES) {
      const config = stageConfig(stage);
      expect(config.listReadUnitsPerSecond).toBe(listReadPace(config.maxReadRequestUnits.inventoryListIndex));
    }
  });

  it('gives both stages an explicit placeholder account and the default region when nothing is configured', () => {
    for (const stage of STAGES) {
      expect(configFrom(stage).env).toEqual({ account: PLACEHOLDER_ACCOUNT, region: DEFAULT_REGION });
    }
  });

  it('takes a stage account and region from context before the environment', () => {
    const context = { 'production:account': '111111111111' };
    const env = { PETSTORE_PRODUCTION_ACCOUNT: '222222222222', PETSTORE_PRODUCTION_REGION: 'eu-central-1' };
    expect(configFrom('production', context, env).env).toEqual({ account: '111111111111', region: 'eu-central-1' });
  });

  it('lets staging follow the CLI credentials but never production', () => {
    const env = { CDK_DEFAULT_ACCOUNT: '333333333333', CDK_DEFAULT_REGION: 'us-east-1' };
    expect(configFrom('staging', {}, env).env).toEqual({ account: '333333333333', region: 'us-east-1' });
    expect(configFrom('production', {}, env).env.account).toBe(PLACEHOLDER_ACCOUNT);
  });

  it('names the stacks PetStoreInventory-staging and PetStoreInventory-production', () => {
    expect(STAGES.map(stackName)).toEqual(['PetStoreInventory-staging', 'PetStoreInventory-production']);
  });

  it('refuses `npm run deploy:production` (context deploying=production) when production has no alarm destination', () => {
    // Prepare: a real account, nothing to send alarms to.
    const context = { deploying: 'production', 'production:account': '555555555555' };

    // Act and assess: the app refuses before building anything; plain synth (no `deploying`) never checks.
    expect(() => buildApp(context)).toThrow(
      /^Refusing to deploy production: production has no alarm destination: set production:alarmEmail or production:alarmTopicArn/,
    );
  });

  it('deploys production once it has an alarm e-mail or topic and a list concurrency (a number or off)', () => {
    const destinations: Record<string, string>[] = [
      { 'production:alarmEmail': 'oncall@example.com', 'production:listReservedConcurrency': '10' },
      {
        'production:alarmTopicArn': 'arn:aws:sns:eu-west-1:555555555555:oncall',
        'production:listReservedConcurrency': 'off',
      },
    ];
    for (const destination of destinations) {
      const context = { 'production:account': '555555555555', ...destination };
      expect(() => assertDeployable(configFrom('production', context))).not.toThrow();
    }
  });

  it('refuses to deploy a stage whose account is still the placeholder, and lets staging go without a destination', () => {
    expect(() => assertDeployable(stageConfig('staging'))).toThrow(
      /its account is the placeholder 000000000000: set staging:account \(-c staging:account=<id>, or PETSTORE_STAGING_ACCOUNT\)/,
    );
    expect(() => assertDeployable(configFrom('staging', { 'staging:account': '444444444444' }))).not.toThrow();
  });

  it('marks the deploy scripts with the stage they deploy, so the app checks it (and synth does not)', () => {
    const { scripts } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      scripts: Record<string, string>;
    };
    for (const stage of STAGES) expect(scripts[`deploy:${stage}`]).toContain(`-c deploying=${stage}`);
    expect(scripts.synth).not.toContain('deploying');
  });

  it('refuses a custom domain without a certificate', () => {
    expect(() => configFrom('staging', { 'staging:domainName': 'inventory.example.com' })).toThrow(/certificateArn/);
  });

  it.each(['0', '-1', '2.5', 'ten'])('refuses a list reserved concurrency of %p, naming the setting', (value) => {
    expect(() => configFrom('production', { 'production:listReservedConcurrency': value })).toThrow(
      `production:listReservedConcurrency must be a positive integer (concurrent executions, or off); got "${value}"`,
    );
  });

  it('refuses a real production account until the list concurrency is said (a number, or off), naming how', () => {
    // Prepare: an alarm destination, so the list concurrency is all that is missing.
    const base = { 'production:account': '555555555555', 'production:alarmEmail': 'oncall@example.com' };
    const config = (extra: Record<string, string>) => configFrom('production', { ...base, ...extra });
    // Act and assess
    expect(() => assertDeployable(config({}))).toThrow(
      /production has no list concurrency: set production:listReservedConcurrency .*\(-c production:listReservedConcurrency=10, or PETSTORE_PRODUCTION_LIST_RESERVED_CONCURRENCY\)/,
    );
    expect(config({ 'production:listReservedConcurrency': '10' }).listReservedConcurrency).toBe(10);
    expect(config({ 'production:listReservedConcurrency': 'off' }).listReservedConcurrency).toBe('off');
    // Staging, and offline synth on the placeholder account, never ask.
    expect(missingSettings(stageConfig('staging'))).toEqual([]);
    expect(() => assertComplete(stageConfig('production'))).not.toThrow();
  });

  it('refuses custom-domain settings without a domainName, which would make nothing without a word', () => {
    const context = { 'staging:hostedZoneId': 'Z123', 'staging:hostedZoneName': 'example.com' };
    expect(() => configFrom('staging', context)).toThrow(/hostedZoneId, hostedZoneName set without a domainName/);
  });

  it.each(['hostedZoneId', 'hostedZoneName'])(
    'refuses a custom domain with only %s of its hosted zone, which would make no DNS record without a word',
    (only) => {
      const context = {
        'staging:domainName': 'inventory.example.com',
        'staging:certificateArn': 'arn:aws:acm:eu-west-1:444444444444:certificate/abc',
        [`staging:${only}`]: only === 'hostedZoneId' ? 'Z123' : 'example.com',
      };
      expect(() => configFrom('staging', context)).toThrow(/needs both hostedZoneId and hostedZoneName, or neither/);
    },
  );
});

describe('The production guard on every path (plain cdk synth and cdk deploy too)', () => {
  const ALARM_SETTING = /production has no alarm destination: set production:alarmEmail or production:alarmTopicArn/;

  it('refuses any synth of the app while production has a real account and no alarm destination', async () => {
    // Prepare: what `PETSTORE_PRODUCTION_ACCOUNT=123456789012 npx cdk synth` hands the app cdk.json runs
    // (infra/app.ts), without `deploying` and without any other AWS, CDK or stage setting of this machine.
    const env = { PETSTORE_PRODUCTION_ACCOUNT: '123456789012' };
    const saved = process.env;
    process.env = {
      ...Object.fromEntries(Object.entries(saved).filter(([name]) => !/^(AWS_|CDK_|PETSTORE_)/.test(name))),
      ...env,
    };
    try {
      // Act and assess: refused before any stack is built, naming the setting and the account.
      const app = import('../../infra/app');
      await expect(app).rejects.toThrow(ALARM_SETTING);
      await expect(app).rejects.toThrow('Refusing to synthesize production for account 123456789012');
    } finally {
      process.env = saved;
    }
    // With a destination the same settings pass the guard (the app this builds is synthesized further down).
    const withEmail = configFrom(
      'production',
      {},
      {
        ...env,
        PETSTORE_PRODUCTION_ALARM_EMAIL: 'oncall@example.com',
        PETSTORE_PRODUCTION_LIST_RESERVED_CONCURRENCY: '10',
      },
    );
    expect(() => assertComplete(withEmail)).not.toThrow();
  });

  it('keeps synth working offline on the placeholder account, and never asks staging for a destination', () => {
    expect(() => assertComplete(stageConfig('production'))).not.toThrow();
    const staging = configFrom('staging', {}, { PETSTORE_STAGING_ACCOUNT: '444444444444' });
    expect(() => assertComplete(staging)).not.toThrow();
  });

  describe('through the installed cdk CLI', () => {
    /** The CLI with no AWS or stage configuration from this machine, as on a fresh clone. */
    const cdk = (args: string[], extraEnv: Record<string, string> = {}) => {
      const env = Object.fromEntries(
        Object.entries(process.env).filter(([name]) => !/^(AWS_|CDK_|PETSTORE_)/.test(name)),
      );
      return runProcess('npx', ['cdk', ...args, '--no-notices'], {
        env: { ...env, CI: 'true', CDK_DISABLE_CLI_TELEMETRY: 'true', ...extraEnv },
      });
    };

    // `cdk list` runs the same app as `cdk synth` without bundling the functions (the infra tests synthesize it),
    // here without the built-in CloudFormation validation (CDK_VALIDATION=false), which reads the templates after the
    // app has run and which nag.test.ts runs.
    it('runs the app on the placeholder account with no configuration at all', async () => {
      const result = await cdk(['list'], { CDK_VALIDATION: 'false' });

      expect(result.stderr).not.toMatch(/Refusing/);
      expect(result.code).toBe(0);
      expect(result.stdout.split('\n')).toEqual(
        expect.arrayContaining(['PetStoreInventory-production', 'PetStoreInventory-staging']),
      );
    }, 120_000);
  });
});

describe('A staging stage with every optional setting (and production in an account of its own)', () => {
  const origin = 'https://shop.example.com';
  const ONCALL_TOPIC = 'arn:aws:sns:eu-west-1:555555555555:oncall';
  const synthesized = synthesizeBeforeAll({
    'staging:account': '444444444444',
    'production:account': '555555555555',
    'production:alarmEmail': 'prod-oncall@example.com',
    // Said, and off: the number is tested on staging; a real production account must say one or the other.
    'production:listReservedConcurrency': 'off',
    'production:alarmTopicArn': ONCALL_TOPIC,
    'staging:alarmEmail': 'oncall@example.com',
    'staging:petsSunsetAt': '2027-06-30',
    'staging:corsOrigins': origin,
    'staging:domainName': 'inventory.example.com',
    'staging:certificateArn': 'arn:aws:acm:eu-west-1:444444444444:certificate/abc',
    'staging:hostedZoneId': 'Z123',
    'staging:hostedZoneName': 'example.com',
    'staging:listReservedConcurrency': '10',
    'staging:historyRetentionDays': '30',
  });

  const template = () => synthesized().templates.staging;

  it('deploys to the configured account', () => {
    expect(synthesized().stacks.staging.account).toBe('444444444444');
    expect(synthesized().stacks.staging).toBeInstanceOf(InventoryStack);
  });

  it('maps the custom domain with the v1 base path over TLS 1.2 and outputs its URL', () => {
    template().hasResourceProperties('AWS::ApiGateway::DomainName', {
      DomainName: 'inventory.example.com',
      SecurityPolicy: 'TLS_1_2',
      EndpointConfiguration: { Types: ['REGIONAL'] },
    });
    template().hasResourceProperties('AWS::ApiGateway::BasePathMapping', { BasePath: 'v1' });
    template().hasResourceProperties('AWS::Route53::RecordSet', { Name: 'inventory.example.com.', Type: 'A' });
    expect(template().toJSON().Outputs[STACK_OUTPUTS.apiUrl].Value).toBe('https://inventory.example.com/v1');
    // What a hand-made DNS record points at: the domain's regional host, the one the alias record uses too.
    const domainId = logicalIdStartingWith(template(), 'AWS::ApiGateway::DomainName', 'InventoryApi');
    expect(template().toJSON().Outputs[STACK_OUTPUTS.customDomainTarget].Value).toEqual({
      'Fn::GetAtt': [domainId, 'RegionalDomainName'],
    });
  });

  it('subscribes the alarm e-mail to the alarm topic', () => {
    template().hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'oncall@example.com',
      TopicArn: { Ref: logicalIdStartingWith(template(), 'AWS::SNS::Topic', 'MonitoringAlarmTopic') },
    });
  });

  /**
   * Reserved concurrency is both the function's share and its maximum (Lambda, "Configuring reserved concurrency",
   * https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html): lists beyond it are throttled, and
   * the other functions keep the rest of the account's concurrency.
   */
  it("reserves the list's concurrency when asked, and no other function's; production, set to off, reserves none", () => {
    const reserved = (stage: 'staging' | 'production') =>
      Object.entries(resourcesOfType(synthesized().templates[stage], 'AWS::Lambda::Function'))
        .filter(
          ([, fn]) => (fn as { ReservedConcurrentExecutions?: number }).ReservedConcurrentExecutions !== undefined,
        )
        .map(([id, fn]) => [
          id.slice(0, -8),
          (fn as { ReservedConcurrentExecutions: number }).ReservedConcurrentExecutions,
        ]);
    expect(reserved('staging')).toEqual([['ListInventoryFunction', 10]]);
    expect(reserved('production')).toEqual([]);
  });

  it('tells the deprecated pets function its sunset date', () => {
    expect(functionEnvironment(template(), 'GetPetByIdFunction').PETS_SUNSET_AT).toBe('2027-06-30');
  });

  it('tells the history function the retention days of its stage', () => {
    expect(functionEnvironment(template(), 'HistoryFunction')[ENV.historyRetentionDays]).toBe('30');
    expect(functionEnvironment(synthesized().templates.production, 'HistoryFunction')[ENV.historyRetentionDays]).toBe(
      '730',
    );
  });

  // Preflights and the origin on gateway responses are tested in test/infra/gateway-responses.test.ts.
  it('tells every route function the allowed origins, so actual responses carry Access-Control-Allow-Origin', () => {
    for (const route of ROUTES) {
      expect(functionEnvironment(template(), functionId(route.operationId)).CORS_ALLOWED_ORIGINS).toBe(origin);
    }
  });

  it('leaves production untouched by staging settings', () => {
    synthesized().templates.production.resourceCountIs('AWS::ApiGateway::DomainName', 0);
    synthesized().templates.production.hasResourceProperties('AWS::SNS::Subscription', {
      Endpoint: 'prod-oncall@example.com',
    });
    synthesized().templates.production.resourceCountIs('AWS::SNS::Subscription', 1);
  });

  it('sends every production alarm, and its recovery, to the configured on-call topic as well as its own', () => {
    const production = synthesized().templates.production;
    const ownTopic = { Ref: logicalIdStartingWith(production, 'AWS::SNS::Topic', 'MonitoringAlarmTopic') };
    // The paging alarms; the roll-out's new-version gates notify nobody (a failed deploy is the notice).
    const alarms = Object.entries(resourcesOfType(production, 'AWS::CloudWatch::Alarm'))
      .filter(([id]) => id.startsWith('Monitoring'))
      .map(([, alarm]) => alarm);
    expect(alarms.length).toBeGreaterThan(0);
    for (const alarm of alarms) {
      expect(alarm.AlarmActions).toEqual([ownTopic, ONCALL_TOPIC]);
      expect(alarm.OKActions).toEqual([ownTopic, ONCALL_TOPIC]);
    }
  });

  it('gives each account its own API Gateway account stack, named by region, and each stage depends on its own', () => {
    expect(Object.keys(synthesized().accountTemplates).sort()).toEqual([
      'PetStoreInventory-account-eu-west-1-444444444444',
      'PetStoreInventory-account-eu-west-1-555555555555',
    ]);
    for (const [stage, account] of [
      ['staging', '444444444444'],
      ['production', '555555555555'],
    ] as const) {
      const accountStack = synthesized().accountStacks.get(`${account}/eu-west-1`);
      expect(accountStack?.stackName).toBe('PetStoreInventory-account-eu-west-1');
      expect(accountStack?.account).toBe(account);
      expect(synthesized().stacks[stage].dependencies).toEqual([accountStack]);
    }
  });

  // The CDK CLI sets a stack's termination protection to the synthesized value on every deploy
  // (`cdk deploy` → UpdateTerminationProtection when they differ), so a value that depended on which stages a deploy
  // knows of would be lifted by a staging deploy from an account stack production shares.
  it('leaves every account stack unprotected, whichever stages share it, so no deploy turns protection on or off', () => {
    for (const accountStack of synthesized().accountStacks.values())
      expect(accountStack.terminationProtection).toBe(false);
    expect(synthesized().stacks.production.terminationProtection).toBe(true);
  });
});
