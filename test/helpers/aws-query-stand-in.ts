import { serveOnLoopback } from './loopback-server';

/** A stand-in for an AWS service that speaks the Query protocol (SNS, CloudFormation), answering as `answer` says. */
export interface QueryStandIn {
  url: string;
  /** Every request's form (`Action`, its parameters), in order. */
  forms: URLSearchParams[];
  close(): Promise<void>;
}

/**
 * SNS and CloudFormation speak the AWS Query protocol: a form-encoded POST naming its `Action`, answered in XML (each
 * service's API Reference shows the documents). Neither runs on this machine, so this stand-in answers as those
 * pages show, and the SDK's own request building and XML parsing are what a test exercises.
 */
export async function startQueryStandIn(
  answer: (form: URLSearchParams) => { status: number; body: string },
): Promise<QueryStandIn> {
  const forms: URLSearchParams[] = [];
  const server = await serveOnLoopback(async (req, res) => {
    let text = '';
    for await (const chunk of req) text += String(chunk);
    const form = new URLSearchParams(text);
    forms.push(form);
    const { status, body } = answer(form);
    res.writeHead(status, { 'Content-Type': 'text/xml' });
    res.end(body);
  });
  return { ...server, forms };
}

/** The Query protocol's error document (HTTP 4xx): `code` is the service's error code, e.g. `AuthorizationError`. */
export function queryError(namespace: string, code: string, message: string): string {
  return (
    `<ErrorResponse xmlns="${namespace}"><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message>` +
    '</Error><RequestId>r-error</RequestId></ErrorResponse>'
  );
}
