import { ROUTES } from '../../functions/routes';
import { functionId, InventoryStack } from '../../infra/inventory-stack';
import { STACK_OUTPUTS, stackName } from '../../infra/shared-names';
import { contextLookup, DEFAULT_REGION, PLACEHOLDER_ACCOUNT, STAGES, stageConfig } from '../../infra/stage-config';
import { logicalIdStartingWith, resourcesOfType, type SynthesizedApp, synthesizeApp, templateMethods } from './synth';

describe('Stage configuration', () => {
  it('gives both stages an explicit placeholder account and the default region when nothing is configured', () => {
    for (const stage of STAGES) {
      expect(
        stageConfig(
          stage,
          contextLookup(() => undefined, {}),
        ).env,
      ).toEqual({
        account: PLACEHOLDER_ACCOUNT,
        region: DEFAULT_REGION,
      });
    }
  });

  it('takes a stage account and region from context before the environment', () => {
    const context: Record<string, string> = { 'production:account': '111111111111' };
    const env = { PETSTORE_PRODUCTION_ACCOUNT: '222222222222', PETSTORE_PRODUCTION_REGION: 'eu-central-1' };
    expect(
      stageConfig(
        'production',
        contextLookup((key) => context[key], env),
      ).env,
    ).toEqual({
      account: '111111111111',
      region: 'eu-central-1',
    });
  });

  it('lets staging follow the CLI credentials but never production', () => {
    const env = { CDK_DEFAULT_ACCOUNT: '333333333333', CDK_DEFAULT_REGION: 'us-east-1' };
    expect(
      stageConfig(
        'staging',
        contextLookup(() => undefined, env),
      ).env,
    ).toEqual({
      account: '333333333333',
      region: 'us-east-1',
    });
    expect(
      stageConfig(
        'production',
        contextLookup(() => undefined, env),
      ).env.account,
    ).toBe(PLACEHOLDER_ACCOUNT);
  });

  it('names the stacks PetStoreInventory-staging and PetStoreInventory-production', () => {
    expect(STAGES.map(stackName)).toEqual(['PetStoreInventory-staging', 'PetStoreInventory-production']);
  });

  it('refuses a custom domain without a certificate', () => {
    const context: Record<string, string> = { 'staging:domainName': 'inventory.example.com' };
    expect(() =>
      stageConfig(
        'staging',
        contextLookup((key) => context[key], {}),
      ),
    ).toThrow(/certificateArn/);
  });
});

describe('A staging stage with every optional setting', () => {
  let synthesized: SynthesizedApp;
  const origin = 'https://shop.example.com';

  beforeAll(() => {
    synthesized = synthesizeApp({
      'staging:account': '444444444444',
      'staging:alarmEmail': 'oncall@example.com',
      'staging:petsSunsetAt': '2027-06-30',
      'staging:corsOrigins': origin,
      'staging:domainName': 'inventory.example.com',
      'staging:certificateArn': 'arn:aws:acm:eu-west-1:444444444444:certificate/abc',
      'staging:hostedZoneId': 'Z123',
      'staging:hostedZoneName': 'example.com',
    });
  });

  afterAll(() => synthesized.dispose());

  const template = () => synthesized.templates.staging;

  it('deploys to the configured account', () => {
    expect(synthesized.stacks.staging.account).toBe('444444444444');
    expect(synthesized.stacks.staging).toBeInstanceOf(InventoryStack);
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
  });

  it('subscribes the alarm e-mail to the alarm topic', () => {
    template().hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'oncall@example.com',
      TopicArn: { Ref: logicalIdStartingWith(template(), 'AWS::SNS::Topic', 'MonitoringAlarmTopic') },
    });
  });

  it('tells the deprecated pets function its sunset date', () => {
    const id = logicalIdStartingWith(template(), 'AWS::Lambda::Function', 'GetPetByIdFunction');
    const fn = resourcesOfType(template(), 'AWS::Lambda::Function')[id] as {
      Environment: { Variables: Record<string, string> };
    };
    expect(fn.Environment.Variables.PETS_SUNSET_AT).toBe('2027-06-30');
  });

  it('answers CORS preflights without the authorizer and sends the origin on gateway responses', () => {
    const options = templateMethods(template()).filter((m) => m.httpMethod === 'OPTIONS');
    const routePaths = new Set(ROUTES.map((route) => route.path));
    for (const path of routePaths) expect(options.map((m) => m.path)).toContain(path);
    for (const method of options) expect(method.authorizationType).toBe('NONE');
    for (const response of Object.values(resourcesOfType(template(), 'AWS::ApiGateway::GatewayResponse'))) {
      expect(response.ResponseParameters).toMatchObject({
        'gatewayresponse.header.Access-Control-Allow-Origin': `'${origin}'`,
      });
    }
  });

  it('tells every route function the allowed origins, so actual responses carry Access-Control-Allow-Origin', () => {
    for (const route of ROUTES) {
      const id = logicalIdStartingWith(template(), 'AWS::Lambda::Function', functionId(route.operationId));
      const fn = resourcesOfType(template(), 'AWS::Lambda::Function')[id] as {
        Environment: { Variables: Record<string, string> };
      };
      expect(fn.Environment.Variables.CORS_ALLOWED_ORIGINS).toBe(origin);
    }
  });

  it('leaves production untouched by staging settings', () => {
    synthesized.templates.production.resourceCountIs('AWS::ApiGateway::DomainName', 0);
    synthesized.templates.production.resourceCountIs('AWS::SNS::Subscription', 0);
  });
});
