/**
 * A loopback port nothing listens on right now: bound by the OS, then released. For a URL that must
 * refuse connections, or a process that must be started on a known port (then restarted on it).
 */
import { createServer } from "node:net";

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
