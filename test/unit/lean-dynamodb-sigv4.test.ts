import { createHash } from 'node:crypto';
import { Sha256Js, Sha256Node } from '@smithy/core/checksum';
import { HttpRequest } from '@smithy/core/protocols';
import { SignatureV4 } from '@smithy/signature-v4';
import fc from 'fast-check';
import { type AwsCredentials, signRequest } from '../../functions/store/sigv4';

/** Signs the same request with the SDK's signer (`@smithy/signature-v4`, as DynamoDBClient configures it). */
async function smithySign(
  request: { host: string; hostname: string; port?: number; headers: Record<string, string>; body: string },
  params: { region: string; service: string; credentials: AwsCredentials; date: Date },
  sha256: typeof Sha256Node | typeof Sha256Js = Sha256Node,
  applyChecksum = true,
): Promise<Record<string, string>> {
  const signer = new SignatureV4({
    service: params.service,
    region: params.region,
    credentials: params.credentials,
    sha256,
    applyChecksum,
  });
  const signed = await signer.sign(
    new HttpRequest({
      method: 'POST',
      protocol: 'https:',
      hostname: request.hostname,
      ...(request.port ? { port: request.port } : {}),
      path: '/',
      query: {},
      headers: { ...request.headers, host: request.host },
      body: request.body,
    }),
    { signingDate: params.date },
  );
  return signed.headers as Record<string, string>;
}

const REGIONS = ['us-east-1', 'eu-west-1', 'ap-southeast-2', 'cn-north-1', 'us-gov-west-1', 'il-central-1'];
const OPERATIONS = ['Scan', 'GetItem', 'UpdateItem', 'PutItem', 'Query'];
/** Printable ASCII, as AWS access keys, secrets and session tokens are (tokens are base64 with `/+=`). */
const printable = (minLength: number, maxLength: number) =>
  fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength, maxLength });
/** Header values with runs of spaces and tabs at either end and inside, which canonicalization folds. */
const headerValue = fc
  .array(fc.oneof(printable(1, 12), fc.constantFrom(' ', '  ', '\t', ' \t ')), { minLength: 1, maxLength: 6 })
  .map((parts) => parts.join(''));

const generatedRequest = fc.record({
  region: fc.oneof(fc.constantFrom(...REGIONS), fc.stringMatching(/^[a-z]{2}-[a-z]{4,9}-[1-9]$/)),
  service: fc.constantFrom('dynamodb', 'dynamodb', 'service'),
  hostname: fc.oneof(
    fc.constant('dynamodb.us-east-1.amazonaws.com'),
    fc.stringMatching(/^[a-z][a-z0-9-]{0,20}(\.[a-z0-9-]{1,12}){0,3}$/),
    fc.constant('127.0.0.1'),
  ),
  port: fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
  operation: fc.constantFrom(...OPERATIONS),
  body: fc.oneof(
    fc.string({ unit: 'binary', maxLength: 300 }),
    fc.jsonValue().map((value) => JSON.stringify(value)),
    fc
      .record({ petId: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), note: fc.string({ unit: 'binary' }) })
      .map(({ petId, note }) =>
        JSON.stringify({ TableName: 'inventory', Key: { petId: { N: String(petId) } }, Note: { S: note } }),
      ),
  ),
  accessKeyId: printable(16, 24),
  secretAccessKey: printable(20, 40),
  sessionToken: fc.option(printable(1, 400), { nil: undefined }),
  date: fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true }),
  extraHeaders: fc.dictionary(fc.stringMatching(/^x-test-[a-z0-9-]{1,10}$/), headerValue, { maxKeys: 3 }),
});

describe('Lean DynamoDB: SigV4 signer', () => {
  it('signs exactly as @smithy/signature-v4 (node crypto and pure JS hashes) for 1,000 generated requests', async () => {
    let compared = 0;
    await fc.assert(
      fc.asyncProperty(generatedRequest, async (generated) => {
        // Prepare: what the lean client sends, plus arbitrary extra headers.
        const host = generated.port ? `${generated.hostname}:${generated.port}` : generated.hostname;
        const headers = {
          'content-type': 'application/x-amz-json-1.0',
          'content-length': String(Buffer.byteLength(generated.body)),
          'x-amz-target': `DynamoDB_20120810.${generated.operation}`,
          ...generated.extraHeaders,
        };
        const credentials: AwsCredentials = {
          accessKeyId: generated.accessKeyId,
          secretAccessKey: generated.secretAccessKey,
          ...(generated.sessionToken ? { sessionToken: generated.sessionToken } : {}),
        };
        const params = { region: generated.region, service: generated.service, credentials, date: generated.date };
        // Act
        const ours = signRequest({ host, headers, body: generated.body }, params);
        const request = { host, hostname: generated.hostname, port: generated.port, headers, body: generated.body };
        const sdkNode = await smithySign(request, params, Sha256Node);
        const sdkJs = await smithySign(request, params, Sha256Js);
        // Assess: the same Authorization (so the same signed header list and signature), and every header the
        // signature covers sent with the same value.
        expect(ours.authorization).toBe(sdkNode.authorization);
        expect(ours.authorization).toBe(sdkJs.authorization);
        expect(ours).toEqual(sdkNode);
        compared++;
      }),
      { numRuns: 1000 },
    );
    expect(compared).toBeGreaterThanOrEqual(1000);
  });

  it('reproduces the AWS SigV4 test suite vector "post-vanilla"', () => {
    // From the AWS Signature Version 4 test suite: POST / to example.amazonaws.com, no body, no other header.
    const headers = signRequest(
      { host: 'example.amazonaws.com', headers: {}, body: '' },
      {
        region: 'us-east-1',
        service: 'service',
        credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
        date: new Date('2015-08-30T12:36:00Z'),
        contentSha256Header: false,
      },
    );
    expect(headers['x-amz-date']).toBe('20150830T123600Z');
    expect(headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, ' +
        'SignedHeaders=host;x-amz-date, Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b',
    );
  });

  it('signs a session token as x-amz-security-token and sends the payload hash, as the SDK does for DynamoDB', () => {
    const body = '{"TableName":"t"}';
    const headers = signRequest(
      { host: 'dynamodb.eu-west-1.amazonaws.com', headers: { 'x-amz-target': 'DynamoDB_20120810.Scan' }, body },
      {
        region: 'eu-west-1',
        service: 'dynamodb',
        credentials: { accessKeyId: 'ASIAEXAMPLE', secretAccessKey: 'secret', sessionToken: 'token==' },
        date: new Date('2026-11-22T01:02:03.456Z'),
      },
    );
    expect(headers['x-amz-security-token']).toBe('token==');
    expect(headers['x-amz-date']).toBe('20261122T010203Z');
    expect(headers['x-amz-content-sha256']).toBe(createHash('sha256').update(body).digest('hex'));
    expect(headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=ASIAEXAMPLE\/20261122\/eu-west-1\/dynamodb\/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token;x-amz-target, Signature=[0-9a-f]{64}$/,
    );
  });
});
