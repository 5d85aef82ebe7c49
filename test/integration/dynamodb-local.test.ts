import { createServer, type Server } from 'node:net';
import { freePort, portInUse, startDynamoDbLocal } from '../../local/dynamodb-local';

/**
 * A DynamoDB Local asked for a port another process holds fails to bind and exits, but the other process may answer
 * the readiness check first: `npm start` would then print "(in memory)" and a new key, and use the other instance's
 * database. The port is checked before anything starts.
 */
describe('Local DynamoDB: a port already in use', () => {
  let holder: Server;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    holder = createServer();
    await new Promise<void>((listening) => holder.listen(port, listening));
  });
  afterAll(async () => {
    await new Promise<void>((closed) => holder.close(() => closed()));
  });

  it('is seen as in use, and a free one as free', async () => {
    expect(await portInUse(port)).toBe(true);
    expect(await portInUse(await freePort())).toBe(false);
  });

  it('is seen as in use when the other process listens on the loopback address only', async () => {
    const loopbackOnly = createServer();
    const other = await freePort();
    await new Promise<void>((listening) => loopbackOnly.listen(other, '127.0.0.1', listening));
    try {
      expect(await portInUse(other)).toBe(true);
    } finally {
      await new Promise<void>((closed) => loopbackOnly.close(() => closed()));
    }
  });

  it('refuses to start DynamoDB Local on it, naming the port and DYNAMODB_PORT, before spawning anything', async () => {
    await expect(startDynamoDbLocal({ port })).rejects.toThrow(
      new RegExp(`^DynamoDB Local cannot start: port ${port} is in use .*set DYNAMODB_PORT to a free port$`),
    );
  });
});
