/**
 * One WebSocket connection to an openpi policy server (openpi's `WebsocketPolicyServer`, RoboArena
 * servers), as openpi-client's `WebsocketClientPolicy` speaks to it:
 *
 * 1. connect; the server's first frame is its metadata, a MessagePack map;
 * 2. each request is one binary frame, the observation map (msgpack-numpy.ts), and each reply one
 *    binary frame, a map with `actions` [horizon, dim] and whatever else the server adds
 *    (openpi adds `server_timing`);
 * 3. a text frame is the server's error (openpi sends its traceback, then closes with 1011).
 *
 * Replies carry no request id: the n-th reply answers the n-th request. `infer` may be called
 * again while a request is still out (the server reads requests in order); a request that timed
 * out keeps its place and its reply is dropped when it comes.
 */
import WebSocket from "ws";
import { describeSocketError } from "../../http/peer-answers.js";
import { NdArray, packOpenpi, unpackOpenpi } from "./msgpack-numpy.js";

export type OpenpiErrorKind = "connect" | "timeout" | "closed" | "server_error" | "protocol";

/** What went wrong talking to an openpi server, in plain words. */
export class OpenpiError extends Error {
  constructor(readonly kind: OpenpiErrorKind, message: string) {
    super(message);
    this.name = "OpenpiError";
  }
}

export interface OpenpiReply {
  /** The action chunk. */
  actions: NdArray | unknown[];
  /** The whole reply map, `actions` and any extra keys such as `server_timing`. */
  raw: Record<string, unknown>;
}

interface Pending {
  settled: boolean;
  resolve(reply: OpenpiReply): void;
  reject(error: Error): void;
}

function describeClose(code: number, reason: Buffer | string): string {
  const text = String(reason);
  return `the policy server closed the connection (code ${code}${text ? `: ${text}` : ""})`;
}

function asBytes(data: WebSocket.RawData): Uint8Array {
  if (Array.isArray(data)) return Buffer.concat(data);
  return data instanceof ArrayBuffer ? new Uint8Array(data) : data;
}

/** Decodes a binary frame into a map, or says what it was instead. */
function decodeMap(bytes: Uint8Array, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = unpackOpenpi(bytes);
  } catch (error) {
    const text = Buffer.from(bytes.subarray(0, 200)).toString("utf8");
    const seen = /^\s*[{[]/.test(text) ? `it looks like JSON: ${text}` : `${bytes.length} bytes starting ${Buffer.from(bytes.subarray(0, 16)).toString("hex")}: ${(error as Error).message}`;
    throw new OpenpiError("protocol", `the policy server's ${what} is not MessagePack (${seen})`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value) || value instanceof NdArray) {
    throw new OpenpiError("protocol", `the policy server's ${what} must be a map; got ${Array.isArray(value) ? "an array" : value === null ? "nil" : typeof value}`);
  }
  return value as Record<string, unknown>;
}

function replyOf(map: Record<string, unknown>): OpenpiReply {
  const actions = map.actions;
  if (actions === undefined) {
    throw new OpenpiError("protocol", `the policy server's reply has no "actions" (its keys: ${Object.keys(map).join(", ") || "none"})`);
  }
  if (!(actions instanceof NdArray) && !Array.isArray(actions)) {
    throw new OpenpiError("protocol", `the policy server's "actions" must be an array [horizon, dim]; got ${typeof actions}`);
  }
  return { actions, raw: map };
}

export class OpenpiClient {
  private readonly queue: Pending[] = [];
  private failure: OpenpiError | undefined;

  private constructor(private readonly socket: WebSocket, readonly url: string, readonly metadata: Record<string, unknown>) {
    socket.on("message", (data, isBinary) => this.onMessage(data, isBinary));
    socket.on("close", (code, reason) => this.fail(new OpenpiError("closed", describeClose(code, reason))));
    socket.on("error", (error) => this.fail(new OpenpiError("closed", `the connection to ${url} failed: ${describeSocketError(error)}`)));
  }

  /**
   * Opens the connection and reads the server's metadata. Rejects with an OpenpiError ("connect",
   * or "timeout" when nothing came within `timeoutMs`).
   */
  static connect(url: string, options: { timeoutMs: number }): Promise<OpenpiClient> {
    const shown = (() => {
      try {
        return new URL(url).href;
      } catch {
        return url;
      }
    })();
    return new Promise<OpenpiClient>((resolve, reject) => {
      let socket: WebSocket;
      try {
        // No permessage-deflate, as openpi's server and client: images do not compress, and it costs CPU.
        socket = new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
      } catch (error) {
        reject(new OpenpiError("connect", `could not connect to ${shown}: ${(error as Error).message}`));
        return;
      }
      let opened = false;
      /** Drops the connect-phase listeners, then fails or hands the socket to a client. */
      const finish = (error: OpenpiError | undefined, metadata?: Record<string, unknown>) => {
        clearTimeout(timer);
        socket.removeAllListeners();
        if (error) {
          socket.on("error", () => undefined);
          socket.terminate();
          reject(error);
        } else {
          resolve(new OpenpiClient(socket, shown, metadata!));
        }
      };
      const timer = setTimeout(() => {
        finish(new OpenpiError("timeout", opened
          ? `connected to ${shown}, but the server sent no metadata within ${options.timeoutMs} ms`
          : `could not connect to ${shown}: no answer within ${options.timeoutMs} ms`));
      }, options.timeoutMs);
      socket.once("open", () => (opened = true));
      socket.once("unexpected-response", (_request, response) => {
        finish(new OpenpiError("connect", `could not connect to ${shown}: the server answered HTTP ${response.statusCode} instead of opening a WebSocket`));
      });
      socket.once("error", (error) => finish(new OpenpiError("connect", `could not connect to ${shown}: ${describeSocketError(error)}`)));
      socket.once("close", (code, reason) => finish(new OpenpiError("closed", `connected to ${shown}, but ${describeClose(code, reason)} before sending its metadata`)));
      socket.once("message", (data, isBinary) => {
        if (!isBinary) {
          finish(new OpenpiError("protocol", `connected to ${shown}, but its first frame is text, not MessagePack metadata: ${String(data).slice(0, 300)}`));
          return;
        }
        let metadata: Record<string, unknown>;
        try {
          metadata = decodeMap(asBytes(data), "metadata");
        } catch (error) {
          finish(error as OpenpiError);
          return;
        }
        finish(undefined, metadata);
      });
    });
  }

  /** Requests still waiting for their reply (timed-out ones included). */
  get outstanding(): number {
    return this.queue.length;
  }

  /**
   * Sends one observation and resolves with the reply to it. Rejects with an OpenpiError: "timeout"
   * after `timeoutMs` (the request keeps its place; its reply will be dropped), "closed",
   * "server_error" (a text frame), "protocol" (not MessagePack, no `actions`).
   */
  infer(observation: Record<string, unknown>, options: { timeoutMs?: number } = {}): Promise<OpenpiReply> {
    if (this.failure) return Promise.reject(this.failure);
    const bytes = packOpenpi(observation);
    return new Promise<OpenpiReply>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const pending: Pending = {
        settled: false,
        resolve: (reply) => {
          clearTimeout(timer);
          resolve(reply);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      if (options.timeoutMs !== undefined) {
        timer = setTimeout(() => {
          pending.settled = true;
          reject(new OpenpiError("timeout", `no reply within ${options.timeoutMs} ms`));
        }, options.timeoutMs);
      }
      this.queue.push(pending);
      this.socket.send(bytes, { binary: true }, (error) => {
        if (error) this.fail(new OpenpiError("closed", `sending to ${this.url} failed: ${error.message}`));
      });
    });
  }

  private onMessage(data: WebSocket.RawData, isBinary: boolean): void {
    if (!isBinary) {
      // openpi's server sends its traceback as text, then closes: every request still out fails with it.
      this.fail(new OpenpiError("server_error", `the policy server reported an error: ${String(data).trim().slice(-2000)}`));
      return;
    }
    const pending = this.queue.shift();
    if (!pending) {
      this.fail(new OpenpiError("protocol", "the policy server sent a reply to no request"));
      return;
    }
    if (pending.settled) return; // the reply to a request that timed out
    pending.settled = true;
    try {
      pending.resolve(replyOf(decodeMap(asBytes(data), "reply")));
    } catch (error) {
      pending.reject(error as Error);
    }
  }

  /** Fails every request still out and every later one with `error`, and closes the connection. */
  private fail(error: OpenpiError, closeCode = 1011): void {
    this.failure ??= error;
    for (const pending of this.queue.splice(0)) {
      if (!pending.settled) {
        pending.settled = true;
        pending.reject(this.failure);
      }
    }
    if (this.socket.readyState === WebSocket.OPEN) this.socket.close(closeCode);
  }

  /** Closes the connection (normal closure); requests still out fail with "closed". */
  async close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return;
    const closed = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.socket.terminate();
        resolve();
      }, 1000);
      this.socket.once("close", () => {
        clearTimeout(timer);
        resolve();
      });
    });
    this.fail(new OpenpiError("closed", "the connection was closed by this side"), 1000);
    await closed;
  }
}
