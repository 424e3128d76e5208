// A base URL where nothing listens, for the "no HTTP answer at all" cases of both clients.
import { createServer, type AddressInfo } from 'node:net';

/** A loopback URL on a port that was just released. */
export async function unreachableBaseUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/api/v1`;
}
