import { type IncomingMessage, request } from 'node:http';
import { serveOnLoopback } from './loopback-server';

/** A DynamoDB endpoint in front of DynamoDB Local that throttles the requests a test chooses. */
export interface ThrottlingEndpoint {
  url: string;
  /**
   * Requests seen, in order: the operation (e.g. `Scan`), whether it was throttled, whether its answer was lost,
   * and its JSON body.
   */
  calls: { operation: string; throttled: boolean; lost?: boolean; body: string }[];
  close(): Promise<void>;
}

/**
 * DynamoDB Local never throttles, so this stand-in answers the requests `throttle` picks as DynamoDB does past a
 * table's read cap: HTTP 400 with a throttling error type and its ThrottlingReasons (DynamoDB Developer Guide,
 * "Diagnosing throttling"); every other request is passed on to DynamoDB Local unchanged.
 */
export function startThrottlingEndpoint(
  target: string,
  throttle: (operation: string, index: number, body: string) => boolean,
  errorType = 'ThrottlingException',
): Promise<ThrottlingEndpoint> {
  return startFaultEndpoint(
    target,
    (operation, index, body) => (throttle(operation, index, body) ? 'throttle' : 'pass'),
    errorType,
  );
}

/**
 * An endpoint in front of DynamoDB Local that loses the answers `lose` picks: the request reaches DynamoDB Local,
 * which applies it, and the connection is then reset before a byte of the answer is sent — what a client sees when
 * a network path drops after the service committed a write. The SDK takes it as a transient error (ECONNRESET) and
 * sends the same request again. Every other request passes unchanged.
 */
export function startAnswerLosingEndpoint(
  target: string,
  lose: (operation: string, index: number, body: string) => boolean,
): Promise<ThrottlingEndpoint> {
  return startFaultEndpoint(target, (operation, index, body) => (lose(operation, index, body) ? 'lose' : 'pass'));
}

/** Passes each request to DynamoDB Local, or throttles it, or loses its answer, as `fault` picks (by operation). */
async function startFaultEndpoint(
  target: string,
  fault: (operation: string, index: number, body: string) => 'pass' | 'throttle' | 'lose',
  errorType = 'ThrottlingException',
): Promise<ThrottlingEndpoint> {
  const calls: ThrottlingEndpoint['calls'] = [];
  const server = await serveOnLoopback(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const operation = String(req.headers['x-amz-target'] ?? '').replace(/^DynamoDB_\d+\./, '');
    const text = body.toString('utf8');
    const picked = fault(operation, calls.filter((call) => call.operation === operation).length, text);
    calls.push({ operation, throttled: picked === 'throttle', lost: picked === 'lose', body: text });
    if (picked === 'throttle') {
      res.writeHead(400, { 'Content-Type': 'application/x-amz-json-1.0' });
      res.end(
        JSON.stringify({
          __type: `com.amazonaws.dynamodb.v20120810#${errorType}`,
          message: 'Throughput exceeds the maximum throughput configured for the table',
          ThrottlingReasons: [{ reason: 'TableReadMaxOnDemandThroughputExceeded', resource: 'arn:test' }],
        }),
      );
      return;
    }
    forward(target, req, body, (answer) => {
      if (picked === 'pass') {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        return;
      }
      // The whole answer is read (DynamoDB Local has applied the request), then the client's connection is reset.
      answer.resume();
      answer.on('end', () => req.socket.resetAndDestroy());
    }).on('error', () => res.destroy());
  });
  return { ...server, calls };
}

function forward(target: string, req: IncomingMessage, body: Buffer, onAnswer: (answer: IncomingMessage) => void) {
  const sent = request(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers }, onAnswer);
  sent.end(body);
  return sent;
}
