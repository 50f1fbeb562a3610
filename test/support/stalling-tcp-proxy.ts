/**
 * A TCP proxy in front of a coordinator's CellLink port that can stop forwarding without closing anything, as a
 * coordinator that stops reading or a network path that goes silent would: the bytes from the client (the cell) stop
 * at the proxy, which stops reading them, so the client's flow control fills up and its calls get no answer; nothing
 * is reset. `resume()` forwards what was held back and carries on. For testing that a client's deadlines end its
 * calls instead of waiting forever, and that it continues once the path recovers.
 */
import { createServer, connect, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

export interface StallingTcpProxy {
  /** host:port to dial instead of the upstream. */
  address: string;
  /** Stops forwarding the client's bytes now (the connections stay open; new ones are accepted and held too). */
  stall(): void;
  /** Stops forwarding once this many more of the client's bytes have been forwarded (0: now). */
  stallAfter(bytes: number): void;
  /** Forwards what was held back and everything after it. */
  resume(): void;
  /** Resolves once a stall has begun (the byte count reached). */
  stalled(): Promise<void>;
  /** Client bytes forwarded upstream so far, all connections. */
  forwardedBytes(): number;
  close(): Promise<void>;
}

interface Pipe {
  client: Socket;
  upstream: Socket;
  held: Buffer[];
}

export async function startStallingTcpProxy(upstreamAddress: string): Promise<StallingTcpProxy> {
  const [host, portText] = [upstreamAddress.slice(0, upstreamAddress.lastIndexOf(":")), upstreamAddress.slice(upstreamAddress.lastIndexOf(":") + 1)];
  const pipes = new Set<Pipe>();
  /** Bytes still to forward before stalling; Infinity while not set to stall. */
  let budget = Number.POSITIVE_INFINITY;
  let forwarded = 0;
  let onStalled: Array<() => void> = [];
  const isStalled = () => budget <= 0;
  const markStalled = () => {
    for (const wake of onStalled.splice(0)) wake();
  };

  const forward = (pipe: Pipe, chunk: Buffer) => {
    if (isStalled()) {
      pipe.held.push(chunk);
      pipe.client.pause();
      return;
    }
    const take = Math.min(chunk.length, budget);
    budget -= take;
    forwarded += take;
    pipe.upstream.write(take === chunk.length ? chunk : chunk.subarray(0, take));
    if (take < chunk.length) pipe.held.push(chunk.subarray(take));
    if (isStalled()) {
      pipe.client.pause();
      markStalled();
    }
  };

  const server = createServer((client) => {
    const upstream = connect(Number(portText), host);
    const pipe: Pipe = { client, upstream, held: [] };
    pipes.add(pipe);
    client.on("data", (chunk: Buffer) => forward(pipe, chunk));
    upstream.on("data", (chunk: Buffer) => client.write(chunk));
    const close = () => {
      pipes.delete(pipe);
      client.destroy();
      upstream.destroy();
    };
    client.on("close", close);
    upstream.on("close", close);
    client.on("error", close);
    upstream.on("error", close);
    if (isStalled()) client.pause();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  const stall = () => {
    budget = 0;
    for (const pipe of pipes) pipe.client.pause();
    markStalled();
  };
  return {
    address: `127.0.0.1:${port}`,
    stall,
    stallAfter(bytes) {
      if (bytes <= 0) stall();
      else budget = bytes;
    },
    resume() {
      budget = Number.POSITIVE_INFINITY;
      for (const pipe of pipes) {
        for (const chunk of pipe.held.splice(0)) {
          forwarded += chunk.length;
          pipe.upstream.write(chunk);
        }
        pipe.client.resume();
      }
    },
    stalled: () => (isStalled() ? Promise.resolve() : new Promise<void>((resolve) => onStalled.push(resolve))),
    forwardedBytes: () => forwarded,
    close: () => new Promise<void>((resolve) => {
      onStalled = [];
      for (const pipe of pipes) {
        pipe.client.destroy();
        pipe.upstream.destroy();
      }
      server.close(() => resolve());
    }),
  };
}
