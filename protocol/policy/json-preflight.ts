/**
 * Pre-flight of a JSON endpoint (json-wire.ts): one step-0 request with a synthetic observation,
 * over HTTP(S) POST or a WebSocket as the url says, and a check that the reply is
 * `{"action": [dof finite numbers]}` (on a WebSocket with `step` 0 echoed, or the agent would never
 * match it to its request).
 *
 * A refusal never repeats what the URL answered (its body, or values from its JSON): the coordinator sends the
 * pre-flight from its own network, so quoting the answer would let a submission read services there. It says the
 * status, the size and type of the answer, and which part of the expected shape is wrong. At most
 * MAX_PREFLIGHT_REPLY_BYTES of an answer are read.
 */
import { randomUUID } from "node:crypto";
import WebSocket from "ws";
import { actionOf, encodeObservation } from "./json-wire.js";
import type { PolicyObservation } from "./policy-observation.js";
import { PreflightError } from "./preflight-error.js";
import { describeSocketError, readBoundedText } from "../http/peer-answers.js";

/** The most of an answer a pre-flight reads; an action reply is a few KB at most. */
export const MAX_PREFLIGHT_REPLY_BYTES = 1024 * 1024;

/** What was wrong with a reply's shape, without its values. */
export function replyShapeProblem(reply: unknown, dof: number): string {
  const kind = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "an array" : `a ${typeof v}`);
  if (typeof reply !== "object" || reply === null || Array.isArray(reply)) return `the reply is ${kind(reply)}, not an object`;
  if (!("action" in reply)) {
    const keys = Object.keys(reply);
    return `the reply has no "action" (it has ${keys.length} other key${keys.length === 1 ? "" : "s"})`;
  }
  const action = (reply as { action: unknown }).action;
  if (!Array.isArray(action)) return `"action" is ${kind(action)}, not an array`;
  if (action.length !== dof) return `"action" has ${action.length} entries; the robot has ${dof} degrees of freedom`;
  const bad = action.findIndex((v) => typeof v !== "number" || !Number.isFinite(v));
  return bad >= 0 ? `"action"[${bad}] is not a finite number` : "the reply does not have the expected shape";
}

/** "123 bytes of text/html": an answer described without its content. */
function answerOf(response: Response, text: string): string {
  const type = (response.headers.get("content-type") ?? "no content type").split(";")[0]!.trim().slice(0, 60);
  return `${Buffer.byteLength(text)} bytes of ${type}; not shown, a pre-flight never repeats what a URL answered`;
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
      throw new PreflightError("unreachable", `could not connect to ${shown(url)}: ${describeSocketError(error)}`);
    }
    let text: string;
    try {
      text = await readBoundedText(response, MAX_PREFLIGHT_REPLY_BYTES, () => new PreflightError("bad_reply", `the endpoint at ${shown(url)} answered more than ${MAX_PREFLIGHT_REPLY_BYTES} bytes (HTTP ${response.status}); an action reply is a few KB`));
    } catch (error) {
      if (error instanceof PreflightError) throw error;
      throw new PreflightError("timeout", `no reply within ${timeoutMs} ms from ${shown(url)}`);
    }
    if (!response.ok) throw new PreflightError("bad_reply", `the endpoint answered HTTP ${response.status} (${answerOf(response, text)})`);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new PreflightError("bad_reply", `the endpoint's reply is not JSON (${answerOf(response, text)})`);
    }
  } finally {
    clearTimeout(timer);
  }
}

function overWebSocket(url: string, body: Record<string, unknown>, timeoutMs: number): Promise<unknown> {
  return new Promise<unknown>((resolve, reject) => {
    const socket = new WebSocket(url, { perMessageDeflate: false, maxPayload: MAX_PREFLIGHT_REPLY_BYTES });
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
    socket.once("error", (error) => finish(new PreflightError(opened ? "bad_reply" : "unreachable", `${opened ? "the connection to" : "could not connect to"} ${shown(url)}${opened ? " failed" : ""}: ${describeSocketError(error)}`)));
    socket.once("close", (code) => finish(new PreflightError("bad_reply", `the endpoint closed the WebSocket (code ${code}) without replying`)));
    socket.once("message", (data) => {
      let reply: unknown;
      try {
        reply = JSON.parse(String(data));
      } catch {
        finish(new PreflightError("bad_reply", `the endpoint's reply is not JSON (${String(data).length} characters; not shown, a pre-flight never repeats what a URL answered)`));
        return;
      }
      if ((reply as { step?: unknown } | null)?.step !== 0) {
        const step = (reply as { step?: unknown } | null)?.step;
        finish(new PreflightError("bad_reply", `the endpoint's WebSocket reply must echo the request's step (0); its step is ${step === undefined ? "missing" : typeof step === "number" ? step : `a ${typeof step}`}`));
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
  } catch {
    throw new PreflightError("bad_reply", `the policy endpoint must answer {"action": [${options.dof} finite numbers]}; ${replyShapeProblem(reply, options.dof)}`);
  }
  return { replyMs };
}
