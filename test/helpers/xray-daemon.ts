import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';

/**
 * A stand-in for the X-Ray daemon that Lambda runs beside a traced function: it listens on UDP and keeps the segment
 * documents it receives. The X-Ray SDK sends each (sub)segment as one datagram: the header line
 * `{"format":"json","version":1}`, a newline, then the document
 * (https://docs.aws.amazon.com/xray/latest/devguide/xray-api-sendingdata.html#xray-api-daemon). In Lambda the SDK streams every subsegment as soon as it closes, under the facade segment Lambda
 * records itself, so the tree is rebuilt from `id` and `parent_id`.
 */
export interface XRayDaemonStandIn {
  /** `host:port`, the value of `AWS_XRAY_DAEMON_ADDRESS`. */
  address: string;
  /** Every document received so far, in order. */
  documents: SegmentDocument[];
  /** Datagrams that were not a header line and a JSON document. */
  rejected: number;
  close(): Promise<void>;
}

/** The fields of a segment document this service's tests read (X-Ray segment document schema). */
export interface SegmentDocument {
  id: string;
  trace_id?: string;
  parent_id?: string;
  name: string;
  type?: string;
  namespace?: string;
  start_time?: number;
  end_time?: number;
  annotations?: Record<string, string | number | boolean>;
  aws?: Record<string, unknown>;
  error?: boolean;
  fault?: boolean;
}

const HEADER = '{"format":"json","version":1}';

/** Starts the stand-in on 127.0.0.1 and a free port. */
export async function startXRayDaemonStandIn(): Promise<XRayDaemonStandIn> {
  const socket = createSocket('udp4');
  const daemon: XRayDaemonStandIn = {
    address: '',
    documents: [],
    rejected: 0,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
  socket.on('message', (message) => {
    const text = message.toString('utf8');
    const newline = text.indexOf('\n');
    try {
      if (newline < 0 || JSON.stringify(JSON.parse(text.slice(0, newline))) !== HEADER) throw new Error('no header');
      daemon.documents.push(JSON.parse(text.slice(newline + 1)) as SegmentDocument);
    } catch {
      daemon.rejected++;
    }
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => resolve());
  });
  daemon.address = `127.0.0.1:${socket.address().port}`;
  // The bench's functions run in other processes: the socket must not keep this one alive on its own.
  socket.unref();
  return daemon;
}

/**
 * A trace header as Lambda sets `_X_AMZN_TRACE_ID` for a sampled invocation: the trace id, the id of the segment
 * Lambda records for the function (the parent of everything the function sends), `Sampled=1`
 * (https://docs.aws.amazon.com/xray/latest/devguide/xray-concepts.html#xray-concepts-tracingheader).
 */
export function lambdaTraceHeader(): { header: string; traceId: string; parentId: string } {
  const traceId = `1-${Math.floor(Date.now() / 1000).toString(16)}-${randomBytes(12).toString('hex')}`;
  const parentId = randomBytes(8).toString('hex');
  return { header: `Root=${traceId};Parent=${parentId};Sampled=1`, traceId, parentId };
}

/**
 * The environment Lambda gives a function with active tracing, pointed at a daemon stand-in, with Powertools'
 * tracing asked for: what a function needs to trace outside Lambda (the bench, the tracing test).
 */
export function tracingEnvironment(daemonAddress: string, traceHeader: string): Record<string, string> {
  return {
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
    LAMBDA_TASK_ROOT: '/var/task',
    _HANDLER: 'index.handler',
    POWERTOOLS_TRACE_ENABLED: 'true',
    AWS_XRAY_DAEMON_ADDRESS: daemonAddress,
    _X_AMZN_TRACE_ID: traceHeader,
    // Unset in Lambda (the X-Ray SDK's automatic mode); empty overrides a caller's manual mode (the tests' default).
    AWS_XRAY_MANUAL_MODE: '',
  };
}
