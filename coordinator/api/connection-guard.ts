/**
 * Bounds on the HTTP connections themselves, before any request is routed: how long the headers
 * and the whole request may take to arrive (a slow client is answered 408 and its socket
 * destroyed: api/client-errors.ts), how long an idle keep-alive socket is kept, and how many open
 * connections one client address may hold (trusted proxies, which carry many clients, are exempt).
 */
import type { Server, ServerOptions } from "node:http";
import type { Socket } from "node:net";
import type { TrustedProxies } from "./client-address.js";
import { normalizeAddress } from "./client-address.js";
import { answerAndDestroy, rawErrorAnswer } from "../http/raw-answer.js";

export interface ConnectionOptions {
  /** A request's headers must have arrived this long after its first byte. Default 10000 ms. */
  headersTimeoutMs: number;
  /** The whole request, body included, must have arrived within this. Default 300000 ms (5 min); upload larger files in chunks. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this (Node adds a 1 s margin). Default 5000 ms. */
  keepAliveTimeoutMs: number;
  /** Connections one client address may hold open at once (0: no cap). Trusted proxies are exempt. Default 256. */
  maxConnectionsPerAddress: number;
}

export const CONNECTION_DEFAULTS: ConnectionOptions = { headersTimeoutMs: 10_000, requestTimeoutMs: 300_000, keepAliveTimeoutMs: 5_000, maxConnectionsPerAddress: 256 };

/** Fills defaults, rejects unknown keys and values Node would refuse (headers timeout above the request timeout). */
export function compileConnectionOptions(raw: Partial<ConnectionOptions> = {}): ConnectionOptions {
  for (const key of Object.keys(raw)) {
    if (!(key in CONNECTION_DEFAULTS)) throw new Error(`unknown connections option "${key}"; known: ${Object.keys(CONNECTION_DEFAULTS).join(", ")}`);
  }
  const o = { ...CONNECTION_DEFAULTS, ...raw };
  for (const key of ["headersTimeoutMs", "requestTimeoutMs", "keepAliveTimeoutMs"] as const) {
    if (!(Number.isFinite(o[key]) && o[key] > 0)) throw new Error(`connections.${key} must be a positive number of milliseconds; got ${o[key]}`);
  }
  if (o.headersTimeoutMs > o.requestTimeoutMs) throw new Error(`connections.headersTimeoutMs (${o.headersTimeoutMs}) must not exceed connections.requestTimeoutMs (${o.requestTimeoutMs})`);
  if (!(Number.isInteger(o.maxConnectionsPerAddress) && o.maxConnectionsPerAddress >= 0)) {
    throw new Error(`connections.maxConnectionsPerAddress must be a whole number (0: no cap); got ${o.maxConnectionsPerAddress}`);
  }
  return o;
}

/** Options for `http.createServer`: Node checks the timeouts every `connectionsCheckingInterval`, so that is a fraction of the headers timeout. */
export function httpServerOptions(o: ConnectionOptions): ServerOptions {
  return {
    headersTimeout: o.headersTimeoutMs,
    requestTimeout: o.requestTimeoutMs,
    keepAliveTimeout: o.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.max(20, Math.min(1000, Math.floor(o.headersTimeoutMs / 4))),
  };
}

/** Caps open connections per client address; one over the cap is answered 429 rate_limited and closed. */
export function capConnectionsPerAddress(server: Server, o: ConnectionOptions, trusted: TrustedProxies, docsUrl: string): void {
  if (o.maxConnectionsPerAddress === 0) return;
  const open = new Map<string, number>();
  server.on("connection", (socket: Socket) => {
    const address = normalizeAddress(socket.remoteAddress ?? "unknown");
    if (trusted.has(address)) return;
    const count = (open.get(address) ?? 0) + 1;
    if (count > o.maxConnectionsPerAddress) {
      const message = `this address already holds ${o.maxConnectionsPerAddress} open connections, the most one client may; close idle ones or reuse keep-alive connections, then retry`;
      answerAndDestroy(socket, rawErrorAnswer(429, { error: { code: "rate_limited", message, doc_url: `${docsUrl}/errors#rate_limited` } }, { "Retry-After": "1" }));
      return;
    }
    open.set(address, count);
    socket.once("close", () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
}
