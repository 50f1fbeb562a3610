/**
 * A webhook receiver on loopback port 0 for tests: records every POST (headers and raw body) and
 * answers with the status `respond` picks; `waitFor` resolves once the received list satisfies a
 * predicate (no sleeps).
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  headers: IncomingHttpHeaders;
  rawBody: string;
  status: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  waitFor(predicate: (received: Received[]) => boolean): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(respond: (attempt: number, rawBody: string) => number): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8");
      const status = respond(received.length + 1, rawBody);
      received.push({ headers: req.headers, rawBody, status });
      res.writeHead(status).end();
      for (const wake of waiters.splice(0)) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    async waitFor(predicate) {
      while (!predicate(received)) await new Promise<void>((resolve) => waiters.push(resolve));
      return received;
    },
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
