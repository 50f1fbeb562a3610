/**
 * An HTTP proxy in front of a coordinator that passes requests through untouched unless a hook
 * breaks one, the way a dropped connection or a proxy with an idle timeout would. The shared part of
 * request-cutting-proxy.ts (cut a request before it is forwarded) and stream-cutting-proxy.ts (cut a
 * response while it streams).
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface FaultyProxyHooks {
  /**
   * Whether to break this request: it is never forwarded, and its socket is destroyed once its body
   * has arrived (the client sees a reset, not an answer). `seen` counts the requests before it with
   * the same method and path.
   */
  cutRequest?(req: IncomingMessage, seen: number): boolean;
  /**
   * The upstream's answer, its head already written to `res`: return true when the hook takes the
   * body over (it pipes, cuts or ends it), false to have it piped through.
   */
  takeAnswer?(req: IncomingMessage, answer: IncomingMessage, res: ServerResponse): boolean;
}

export interface FaultyProxy {
  /** The proxy's base URL, to use instead of the coordinator's. */
  url: string;
  close(): Promise<void>;
}

export async function startFaultyProxy(target: string, hooks: FaultyProxyHooks): Promise<FaultyProxy> {
  const upstreamBase = new URL(target);
  const seen = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const key = `${req.method} ${(req.url ?? "").split("?")[0]}`;
    const count = seen.get(key) ?? 0;
    seen.set(key, count + 1);
    if (hooks.cutRequest?.(req, count)) {
      req.resume();
      req.on("end", () => req.socket.destroy());
      return;
    }
    const upstream = request(new URL(req.url ?? "/", upstreamBase), { method: req.method, headers: { ...req.headers, host: upstreamBase.host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      if (!hooks.takeAnswer?.(req, answer, res)) answer.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
