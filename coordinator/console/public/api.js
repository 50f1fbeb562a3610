/**
 * The console's only way to the coordinator: fetch with `Authorization: Bearer <key>` on the page's
 * own origin. The key comes from session.js and goes into that header only, never into a URL, a log
 * or an error message. Non-2xx answers become an ApiError carrying the API's envelope (code,
 * message, doc_url, run_id).
 */

let currentKey = () => null;
let whenUnauthorized = () => {};

/** Where the key comes from, and what to do when the coordinator stops accepting it (revoked). */
export function configureApi({ key, unauthorized }) {
  currentKey = key;
  whenUnauthorized = unauthorized;
}

/** An error answer of the API (its envelope), or `network` when the coordinator could not be reached. */
export class ApiError extends Error {
  constructor({ status, code, message, docUrl, runId, partialResult }) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.docUrl = docUrl ?? null;
    this.runId = runId ?? null;
    this.partialResult = partialResult ?? null;
  }
}

const SAME_ORIGIN_PREFIXES = ["/v1/", "/artifacts/", "/streams/", "/labels/", "/docs/"];

/**
 * The path (and query) of a URL the API handed out, for use on this page's origin. The coordinator
 * that served the console is the one it talks to, so the key is never sent to another host, and
 * URLs built with another host name (127.0.0.1 vs localhost) still work.
 */
export function localPath(url) {
  if (url.startsWith("/")) return url;
  const parsed = new URL(url);
  if (!SAME_ORIGIN_PREFIXES.some((prefix) => parsed.pathname.startsWith(prefix))) {
    throw new Error(`not a URL of this coordinator: ${parsed.pathname}`);
  }
  return parsed.pathname + parsed.search;
}

async function errorOf(response) {
  let envelope = null;
  try {
    envelope = (await response.json()).error ?? null;
  } catch {
    // Not the API's envelope (a proxy's page): described from the status alone below.
  }
  return new ApiError({
    status: response.status,
    code: envelope?.code ?? `http_${response.status}`,
    message: envelope?.message ?? `the coordinator answered HTTP ${response.status} ${response.statusText}`,
    docUrl: envelope?.doc_url,
    runId: envelope?.run_id,
    partialResult: envelope?.partial_result,
  });
}

const sleep = (ms, signal) => new Promise((resolve, reject) => {
  const timer = setTimeout(resolve, ms);
  signal?.addEventListener("abort", () => { clearTimeout(timer); reject(signal.reason); }, { once: true });
});

/**
 * One request; resolves with the Response when 2xx, throws ApiError otherwise. A 429 on a GET is
 * retried after its Retry-After (twice at most). `key` overrides the session's (sign-in tries one).
 */
export async function send(path, { method = "GET", json, headers = {}, signal, key, idempotencyKey } = {}) {
  const secret = key ?? currentKey();
  const init = { method, signal, headers: { ...headers }, cache: "no-store" };
  if (secret) init.headers.authorization = `Bearer ${secret}`;
  if (json !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(json);
  }
  if (idempotencyKey) init.headers["idempotency-key"] = idempotencyKey;
  for (let attempt = 0; ; attempt++) {
    let response;
    try {
      response = await fetch(localPath(path), init);
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new ApiError({ status: 0, code: "network", message: "could not reach the coordinator; check that it is running and reload the page" });
    }
    if (response.ok) return response;
    if (response.status === 429 && method === "GET" && attempt < 2) {
      await sleep(Math.min(5, Number(response.headers.get("retry-after")) || 1) * 1000, signal);
      continue;
    }
    const error = await errorOf(response);
    if (error.status === 401 && key === undefined) whenUnauthorized(error);
    throw error;
  }
}

/** A JSON request: resolves with the parsed body. */
export async function api(path, options) {
  return (await send(path, options)).json();
}

/** A file the API serves with the key (a video, an MCAP, a PDF, an export) as a Blob. */
export async function apiBlob(path, options) {
  return (await send(path, options)).blob();
}

/**
 * Server-sent events of `path` (GET /v1/runs/{id}/events) read with fetch, since EventSource cannot
 * send the Authorization header. Calls `onEvent({event, data})` with `data` parsed as JSON; resolves
 * when the server ends the stream (it does after a terminal status).
 */
export async function readEvents(path, { signal, onEvent }) {
  const response = await send(path, { signal, headers: { accept: "text/event-stream" } });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let pending = "";
  let event = "message";
  let data = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      pending += value;
      const lines = pending.split("\n");
      pending = lines.pop();
      for (const raw of lines) {
        const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
        if (line === "") {
          if (data.length > 0) onEvent({ event, data: JSON.parse(data.join("\n")) });
          event = "message";
          data = [];
        } else if (line.startsWith(":")) {
          continue; // heartbeat comment
        } else {
          const colon = line.indexOf(":");
          const name = colon < 0 ? line : line.slice(0, colon);
          const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (name === "event") event = text;
          else if (name === "data") data.push(text);
        }
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}
