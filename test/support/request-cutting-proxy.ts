/**
 * An HTTP proxy in front of a coordinator that breaks chosen requests the way a dropped connection
 * does: a request `cut` picks is never forwarded, and its socket is destroyed once its body has
 * arrived (the client sees a reset, not an answer). Every other request passes through untouched.
 * For testing that a client resumes where the server stands (a model upload broken mid-way).
 */
import type { IncomingMessage } from "node:http";
import { startFaultyProxy } from "./faulty-proxy.js";

export interface RequestCuttingProxy {
  /** The proxy's base URL, to use instead of the coordinator's. */
  url: string;
  /** Requests cut so far. */
  cuts(): number;
  close(): Promise<void>;
}

/** `cut(req, seen)`: whether to break this request; `seen` counts the requests before it with the same method and path. */
export async function startRequestCuttingProxy(target: string, cut: (req: IncomingMessage, seen: number) => boolean): Promise<RequestCuttingProxy> {
  let cuts = 0;
  const proxy = await startFaultyProxy(target, {
    cutRequest: (req, seen) => {
      const cutting = cut(req, seen);
      if (cutting) cuts++;
      return cutting;
    },
  });
  return { ...proxy, cuts: () => cuts };
}
