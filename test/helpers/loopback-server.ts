import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An HTTP server a test started on a free loopback port. */
export interface LoopbackServer {
  /** `http://127.0.0.1:<port>`, no path. */
  url: string;
  /** Closes it, its kept-alive connections included. */
  close(): Promise<void>;
}

/** Serves `listener` on 127.0.0.1 and a port the system picks. */
export async function serveOnLoopback(
  listener: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<LoopbackServer> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
