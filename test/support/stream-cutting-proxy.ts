/**
 * An HTTP proxy in front of a coordinator that breaks run event streams, as a flaky network or a
 * proxy with an idle timeout would: the first `cuts` responses of GET /v1/runs/{id}/events are cut
 * (the client's socket destroyed) at the first chunk that follows one carrying an `episode` event,
 * and that chunk is not passed on: the client has had an episode for a while (so it was flushed and
 * read, not lost with the socket), and the stream breaks with the next event on its way. Everything
 * else passes through untouched. For testing that a client reconnects and counts each episode once.
 */
import { createServer, request, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface StreamCuttingProxy {
  /** The proxy's base URL, to use instead of the coordinator's. */
  url: string;
  /** Event streams cut so far. */
  cuts(): number;
  /** Requests for event streams seen so far (the first connection and every reconnect). */
  eventStreams(): number;
  close(): Promise<void>;
}

export async function startStreamCuttingProxy(target: string, options: { cuts: number }): Promise<StreamCuttingProxy> {
  const upstreamBase = new URL(target);
  let cutsLeft = options.cuts;
  let cut = 0;
  let eventStreams = 0;
  const server: Server = createServer((req, res) => {
    const isEvents = /^\/v1\/runs\/[^/]+\/events(\?|$)/.test(req.url ?? "");
    if (isEvents) eventStreams++;
    const upstream = request(
      new URL(req.url ?? "/", upstreamBase),
      { method: req.method, headers: { ...req.headers, host: upstreamBase.host } },
      (answer: IncomingMessage) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        if (!isEvents || answer.statusCode !== 200 || cutsLeft <= 0) return void answer.pipe(res);
        cutsLeft--;
        let episodeForwarded = false;
        answer.on("data", (chunk: Buffer) => {
          if (!episodeForwarded) {
            episodeForwarded = chunk.toString().includes("event: episode");
            return void res.write(chunk);
          }
          cut++;
          answer.destroy();
          res.socket?.destroy();
        });
        answer.on("end", () => res.end());
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    cuts: () => cut,
    eventStreams: () => eventStreams,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
