/**
 * Pre-flight of a JSON endpoint (json-wire.ts): one step-0 request with a synthetic observation,
 * over HTTP(S) POST or a WebSocket as the url says, and a check that the reply is
 * `{"action": [dof finite numbers]}` (on a WebSocket with `step` 0 echoed, or the agent would never
 * match it to its request).
 */
import { randomUUID } from "node:crypto";
import WebSocket from "ws";
import { actionOf, encodeObservation } from "./json-wire.js";
import type { PolicyObservation } from "./policy-observation.js";
import { PreflightError } from "./preflight-error.js";

const SOCKET_ERRORS: Record<string, string> = {
  ECONNREFUSED: "connection refused", ECONNRESET: "connection reset", ENOTFOUND: "host not found", EAI_AGAIN: "host name lookup failed",
  ETIMEDOUT: "connection timed out", EHOSTUNREACH: "host unreachable", ENETUNREACH: "network unreachable",
};

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = (error as { code?: string }).code ?? cause?.code;
  return (code && SOCKET_ERRORS[code]) ?? cause?.message ?? (error as Error).message;
}

function shown(url: string): string {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}

async function overHttp(url: string, body: Record<string, unknown>, timeoutMs: number): Promise<unknown> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    let response: Response;
    try {
      response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), signal: abort.signal });
    } catch (error) {
      if (abort.signal.aborted) throw new PreflightError("timeout", `no reply within ${timeoutMs} ms from ${shown(url)}`);
      throw new PreflightError("unreachable", `could not connect to ${shown(url)}: ${describe(error)}`);
    }
    let text: string;
    try {
      text = await response.text();
    } catch {
      throw new PreflightError("timeout", `no reply within ${timeoutMs} ms from ${shown(url)}`);
    }
    if (!response.ok) throw new PreflightError("bad_reply", `the endpoint answered HTTP ${response.status}: ${text.slice(0, 200)}`);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new PreflightError("bad_reply", `the endpoint's reply is not JSON: ${text.slice(0, 200)}`);
    }
  } finally {
    clearTimeout(timer);
  }
}

function overWebSocket(url: string, body: Record<string, unknown>, timeoutMs: number): Promise<unknown> {
  return new Promise<unknown>((resolve, reject) => {
    const socket = new WebSocket(url, { perMessageDeflate: false });
    let opened = false;
    const finish = (error: PreflightError | undefined, reply?: unknown) => {
      clearTimeout(timer);
      socket.removeAllListeners();
      socket.on("error", () => undefined);
      if (socket.readyState === WebSocket.OPEN) socket.close(1000);
      else socket.terminate();
      if (error) reject(error);
      else resolve(reply);
    };
    const timer = setTimeout(() => {
      finish(new PreflightError(opened ? "timeout" : "unreachable", opened
        ? `no reply within ${timeoutMs} ms from ${shown(url)}`
        : `could not connect to ${shown(url)}: no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once("open", () => {
      opened = true;
      socket.send(JSON.stringify(body));
    });
    socket.once("unexpected-response", (_request, response) => {
      finish(new PreflightError("unreachable", `could not connect to ${shown(url)}: the server answered HTTP ${response.statusCode} instead of opening a WebSocket`));
    });
    socket.once("error", (error) => finish(new PreflightError(opened ? "bad_reply" : "unreachable", `${opened ? "the connection to" : "could not connect to"} ${shown(url)}${opened ? " failed" : ""}: ${describe(error)}`)));
    socket.once("close", (code) => finish(new PreflightError("bad_reply", `the endpoint closed the WebSocket (code ${code}) without replying`)));
    socket.once("message", (data) => {
      let reply: unknown;
      try {
        reply = JSON.parse(String(data));
      } catch {
        finish(new PreflightError("bad_reply", `the endpoint's reply is not JSON: ${String(data).slice(0, 200)}`));
        return;
      }
      if ((reply as { step?: unknown } | null)?.step !== 0) {
        finish(new PreflightError("bad_reply", `the endpoint's WebSocket reply must echo the request's step (0); got ${JSON.stringify(reply)?.slice(0, 200)}`));
        return;
      }
      finish(undefined, reply);
    });
  });
}

/** Sends one step-0 request and checks its action. Throws PreflightError. */
export async function preflightJson(url: string, observation: PolicyObservation, options: { dof: number; timeoutMs: number }): Promise<{ replyMs: number }> {
  const body = encodeObservation(`preflight-${randomUUID()}`, 0, observation, { seed: 0, controlRateHz: 30 });
  const sentMs = performance.now();
  const reply = /^wss?:/.test(url) ? await overWebSocket(url, body, options.timeoutMs) : await overHttp(url, body, options.timeoutMs);
  const replyMs = performance.now() - sentMs;
  try {
    actionOf(reply, options.dof);
  } catch (error) {
    throw new PreflightError("bad_reply", (error as Error).message);
  }
  return { replyMs };
}
