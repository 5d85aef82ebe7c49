import { createHash, createHmac } from 'node:crypto';

/** AWS credentials as Lambda hands them to a function (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN). */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** A request to sign: always `POST /` with no query string, as every DynamoDB JSON-protocol call is. */
export interface SignableRequest {
  /** The `host` header value: hostname, plus `:port` when the port is not the scheme's default. */
  host: string;
  /**
   * Headers to send and sign, names in lower case. `host`, `x-amz-date`, `x-amz-content-sha256` and (with a session
   * token) `x-amz-security-token` are added.
   */
  headers: Readonly<Record<string, string>>;
  body: string;
}

/** Where and as whom to sign. */
export interface SigningParams {
  region: string;
  service: string;
  credentials: AwsCredentials;
  date: Date;
  /**
   * Send and sign the payload hash as `x-amz-content-sha256`, as the SDK does for DynamoDB.
   * @default true
   */
  contentSha256Header?: boolean;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';
const signingKeys = new Map<string, Buffer>();

/**
 * Signs a `POST /` request with AWS Signature Version 4 (header form): returns every header to send, in lower
 * case, including `authorization`, `host`, `x-amz-date`, `x-amz-content-sha256` and, with a session token,
 * `x-amz-security-token`. Every header given is signed, as the SDK signs every header it sends but a few
 * (user-agent and its own telemetry headers).
 *
 * Equivalent to `@smithy/signature-v4` for such requests (test/unit/lean-dynamodb-sigv4.test.ts compares them).
 */
export function signRequest(request: SignableRequest, params: SigningParams): Record<string, string> {
  const { credentials } = params;
  const longDate = params.date
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');
  const shortDate = longDate.slice(0, 8);
  const scope = `${shortDate}/${params.region}/${params.service}/aws4_request`;

  const payloadHash = sha256Hex(request.body);
  const headers: Record<string, string> = {
    ...request.headers,
    host: request.host,
    'x-amz-date': longDate,
  };
  if (params.contentSha256Header !== false) headers['x-amz-content-sha256'] = payloadHash;
  if (credentials.sessionToken) headers['x-amz-security-token'] = credentials.sessionToken;
  delete headers.authorization;

  const names = Object.keys(headers).sort();
  const canonicalHeaders = names.map((name) => `${name}:${canonicalValue(headers[name] as string)}\n`).join('');
  const signedHeaders = names.join(';');
  const canonicalRequest = `POST\n/\n\n${canonicalHeaders}\n${signedHeaders}\n${payloadHash}`;
  const stringToSign = `${ALGORITHM}\n${longDate}\n${scope}\n${sha256Hex(canonicalRequest)}`;
  const signature = createHmac(
    'sha256',
    signingKey(credentials.secretAccessKey, shortDate, params.region, params.service),
  )
    .update(stringToSign, 'utf8')
    .digest('hex');

  headers.authorization = `${ALGORITHM} Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return headers;
}

/** Trims a header value and folds runs of blanks (and line breaks) into one space, as SigV4 canonicalization does. */
function canonicalValue(value: string): string {
  return value
    .replace(/[\r\n]/g, ' ')
    .replace(/[ \t]+/g, ' ')
    .replace(/^ | $/g, '');
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The derived signing key, cached per secret, day, region and service (a handful in a function's lifetime). */
function signingKey(secret: string, shortDate: string, region: string, service: string): Buffer {
  const cacheKey = `${shortDate}\n${region}\n${service}\n${secret}`;
  let key = signingKeys.get(cacheKey);
  if (!key) {
    const dateKey = createHmac('sha256', `AWS4${secret}`).update(shortDate, 'utf8').digest();
    const regionKey = createHmac('sha256', dateKey).update(region, 'utf8').digest();
    const serviceKey = createHmac('sha256', regionKey).update(service, 'utf8').digest();
    key = createHmac('sha256', serviceKey).update('aws4_request', 'utf8').digest();
    if (signingKeys.size >= 16) signingKeys.clear();
    signingKeys.set(cacheKey, key);
  }
  return key;
}
