import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:tls';
import { generate } from 'selfsigned';

/**
 * DynamoDB Local behind TLS with a self-signed certificate the probes trust (`NODE_EXTRA_CA_CERTS`): a deployed
 * function's first call is over HTTPS, and over plain HTTP it would differ.
 */
export interface DynamoDbTlsEndpoint {
  /** `https://127.0.0.1:<port>`, for `AWS_ENDPOINT_URL_DYNAMODB`. */
  url: string;
  /** The certificate (PEM), which is also its own CA. */
  certificate: string;
  /** The environment a client process needs to reach DynamoDB Local through this endpoint, certificate verified. */
  clientEnvironment: Record<string, string>;
  close(): Promise<void>;
}

/** Starts a TLS endpoint on 127.0.0.1 and a free port, forwarding every connection to `dynamoEndpoint` (http). */
export async function startDynamoDbTlsEndpoint(dynamoEndpoint: string): Promise<DynamoDbTlsEndpoint> {
  const target = new URL(dynamoEndpoint);
  if (target.protocol !== 'http:') throw new Error(`expected DynamoDB Local's http endpoint, got ${dynamoEndpoint}`);
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    // RSA 2048 and SHA-256, as the certificates of AWS's DynamoDB endpoints (Amazon RSA 2048 issuers).
    keySize: 2048,
    algorithm: 'sha256',
    notAfterDate: new Date(Date.now() + 24 * 3600 * 1000),
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
    ],
  });
  const sockets = new Set<Socket>();
  const server = createServer({ key: pems.private, cert: pems.cert }, (client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    }
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the TLS endpoint has no port');
  const dir = mkdtempSync(join(tmpdir(), 'dynamodb-tls-'));
  const certificateFile = join(dir, 'certificate.pem');
  writeFileSync(certificateFile, pems.cert);
  return {
    url: `https://127.0.0.1:${address.port}`,
    certificate: pems.cert,
    clientEnvironment: { NODE_EXTRA_CA_CERTS: certificateFile },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        });
      }),
  };
}
