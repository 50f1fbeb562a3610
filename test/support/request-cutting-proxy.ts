/**
 * An HTTP proxy in front of a coordinator that breaks chosen requests the way a dropped connection
 * does: a request `cut` picks is never forwarded, and its socket is destroyed once its body has
 * arrived (the client sees a reset, not an answer). Every other request passes through untouched.
 * For testing that a client resumes where the server stands (a model upload broken mid-way).
 */
import { createServer, request, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface RequestCuttingProxy {
  /** The proxy's base URL, to use instead of the coordinator's. */
  url: string;
  /** Requests cut so far. */
  cuts(): number;
  close(): Promise<void>;
}

/** `cut(req, seen)`: whether to break this request; `seen` counts the requests before it with the same method and path. */
export async function startRequestCuttingProxy(target: string, cut: (req: IncomingMessage, seen: number) => boolean): Promise<RequestCuttingProxy> {
  const upstreamBase = new URL(target);
  const seen = new Map<string, number>();
  let cuts = 0;
  const server: Server = createServer((req, res) => {
    const key = `${req.method} ${(req.url ?? "").split("?")[0]}`;
    const count = seen.get(key) ?? 0;
    seen.set(key, count + 1);
    if (cut(req, count)) {
      cuts++;
      req.resume();
      req.on("end", () => req.socket.destroy());
      return;
    }
    const upstream = request(new URL(req.url ?? "/", upstreamBase), { method: req.method, headers: { ...req.headers, host: upstreamBase.host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    cuts: () => cuts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
