/**
 * The /v1 API over fetch, with `Authorization: Bearer <key>` on every request. Turns the API's error
 * envelope `{error: {code, message, doc_url}}` and network failures into CliErrors (exit 3), and
 * waits out a 429 (`Retry-After`) a few times before giving up.
 */
import type { ApiSettings } from "./api-settings.js";
import { CliError, EXIT } from "./exit-codes.js";

/** A successful JSON answer: the parsed body and the exact text it was parsed from. */
export interface JsonAnswer<T> {
  status: number;
  headers: Headers;
  data: T;
  /** The body exactly as sent; `--json` prints this. */
  text: string;
}

export interface RequestOptions {
  query?: Record<string, string | number | undefined>;
  /** A JSON body, already serialised (sent as is). */
  body?: string;
  /** Bytes to send instead (a model chunk); give their content-type in `headers`. */
  bytes?: Uint8Array<ArrayBuffer>;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

const RATE_LIMIT_RETRIES = 3;
const RETRY_AFTER_CAP_S = 30;

export class ApiClient {
  constructor(private readonly settings: ApiSettings) {}

  /** Where the API lives, as the user gave it (no trailing slash), for messages. */
  get origin(): string {
    return this.settings.baseUrl.href.replace(/\/$/, "");
  }

  /** A path under the base URL (`/v1/runs`), or an absolute URL the API handed out (download_url, mcap_url). */
  url(pathOrUrl: string, query: RequestOptions["query"] = {}): URL {
    const url = /^https?:\/\//.test(pathOrUrl) ? new URL(pathOrUrl) : new URL(pathOrUrl.replace(/^\//, ""), this.settings.baseUrl);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value));
    return url;
  }

  /** Sends a request and parses the JSON answer; any non-2xx answer throws the API's error. */
  async json<T = Record<string, unknown>>(method: string, path: string, options: RequestOptions = {}): Promise<JsonAnswer<T>> {
    const response = await this.send(method, path, { ...options, headers: { accept: "application/json", ...options.headers } });
    const text = await response.text();
    let data: T;
    try {
      data = JSON.parse(text) as T;
    } catch {
      throw new CliError(EXIT.api, `the Assay API answered ${method} ${response.url} with something that is not JSON: ${JSON.stringify(text.slice(0, 200))}`);
    }
    return { status: response.status, headers: response.headers, data, text };
  }

  /** Sends a request and returns the 2xx response unread (streams, files); any other answer throws the API's error. */
  async send(method: string, pathOrUrl: string, options: RequestOptions = {}): Promise<Response> {
    const url = this.url(pathOrUrl, options.query);
    // A public endpoint (leaderboards) may be called without a key; a key that is set is always sent.
    const headers: Record<string, string> = { ...(this.settings.key ? { authorization: `Bearer ${this.settings.key}` } : {}), ...options.headers };
    if (options.body !== undefined) headers["content-type"] = "application/json";
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await fetch(url, { method, headers, body: options.bytes ?? options.body, signal: options.signal });
      } catch (error) {
        if (options.signal?.aborted) throw error;
        throw this.unreachable(error);
      }
      if (response.ok) return response;
      if (response.status === 429 && attempt < RATE_LIMIT_RETRIES) {
        await response.body?.cancel();
        const waitS = Math.min(RETRY_AFTER_CAP_S, Math.max(1, Number(response.headers.get("retry-after")) || 1));
        await new Promise((resolve) => setTimeout(resolve, waitS * 1000));
        continue;
      }
      throw await apiError(response, method, url);
    }
  }

  /** The exit-3 error for a request that never got an answer. */
  unreachable(error: unknown): CliError {
    return new CliError(EXIT.api, `cannot reach the Assay API at ${this.origin}: ${networkReason(error)}; is the coordinator running?`, { unreachable: true, cause: error });
  }
}

/** The API's error envelope as a CliError: `<message> (<code>)`, then `see <doc_url>`. */
async function apiError(response: Response, method: string, url: URL): Promise<CliError> {
  const text = await response.text().catch(() => "");
  let envelope: { error?: { code?: unknown; message?: unknown; doc_url?: unknown } } | undefined;
  try {
    envelope = JSON.parse(text);
  } catch {
    envelope = undefined;
  }
  const error = envelope?.error;
  if (error && typeof error.message === "string") {
    const code = typeof error.code === "string" ? ` (${error.code})` : "";
    const lines = typeof error.doc_url === "string" ? [`see ${error.doc_url}`] : [];
    return new CliError(EXIT.api, `${error.message}${code}`, { lines, envelope, rawBody: text });
  }
  const body = text.trim() ? `: ${text.trim().slice(0, 200)}` : "";
  return new CliError(EXIT.api, `the Assay API answered ${response.status} ${response.statusText} to ${method} ${url.pathname}${body}`);
}

const REASONS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "the connection was reset",
  ENOTFOUND: "no such host",
  EAI_AGAIN: "the host name could not be resolved",
  ETIMEDOUT: "the connection timed out",
  UND_ERR_CONNECT_TIMEOUT: "the connection timed out",
  EHOSTUNREACH: "no route to the host",
  ENETUNREACH: "the network is unreachable",
  UND_ERR_SOCKET: "the connection broke",
  DEPTH_ZERO_SELF_SIGNED_CERT: "its TLS certificate is self-signed",
  CERT_HAS_EXPIRED: "its TLS certificate has expired",
};

/** A short reason for a failed fetch, from the system error code under undici's "fetch failed". */
export function networkReason(error: unknown): string {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === "object" && !seen.has(current)) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && REASONS[code]) return REASONS[code];
    // Several addresses tried (localhost: ::1 then 127.0.0.1) give an AggregateError of the same cause.
    const inner = (current as { errors?: unknown[] }).errors;
    current = Array.isArray(inner) && inner.length > 0 ? inner[0] : (current as { cause?: unknown }).cause;
  }
  const last = [...seen].pop() as { message?: unknown } | undefined;
  return typeof last?.message === "string" ? last.message : String(error);
}
