/**
 * A synchronous PostgreSQL client. The coordinator's store calls are synchronous, as better-sqlite3
 * made them; on PostgreSQL each call is sent to a worker thread that owns one connection, and the
 * calling thread blocks (Atomics.wait) until the reply is posted. The event loop is held for one
 * round trip per statement, about as long as better-sqlite3 holds it for a commit, and a process
 * runs one transaction at a time, which is what the store's code assumes. A deployment scales by
 * running more coordinator processes (docs/deploy.md).
 */
import { createHash } from "node:crypto";
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from "node:worker_threads";
import type { SyncReply, SyncRequest, SyncWorkerData } from "./sync-protocol.js";

/** An error PostgreSQL returned; `code` is its SQLSTATE (23505: unique violation, 40P01: deadlock). */
export class PostgresError extends Error {
  readonly code: string | undefined;
  readonly constraint: string | undefined;
  constructor(message: string, code?: string, detail?: string, constraint?: string) {
    super(detail ? `${message} (${detail})` : message);
    this.name = "PostgresError";
    this.code = code;
    this.constraint = constraint;
  }
}

export interface SyncClientOptions {
  connectionString: string;
  /** Longest wait for one reply before the call throws; default 60 s (statement_timeout is 30 s). */
  replyTimeoutMs?: number;
  /** Statements run on each new connection; default: lock_timeout 5 s, statement_timeout 30 s. */
  sessionSettings?: string[];
}

const DEFAULT_SESSION = ["SET lock_timeout = '5s'", "SET statement_timeout = '30s'", "SET idle_in_transaction_session_timeout = '60s'"];

export class SyncClient {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly signal = new Int32Array(new SharedArrayBuffer(4));
  private readonly replyTimeoutMs: number;
  private closed = false;
  private lastId = 0;

  constructor(options: SyncClientOptions) {
    this.replyTimeoutMs = options.replyTimeoutMs ?? 60_000;
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    const data: SyncWorkerData & { port: MessagePort } = {
      port: port2,
      flag: this.signal.buffer as SharedArrayBuffer,
      connectionString: options.connectionString,
      sessionSettings: options.sessionSettings ?? DEFAULT_SESSION,
    };
    this.worker = new Worker(new URL("./sync-client-worker.mjs", import.meta.url), {
      workerData: data,
      transferList: [port2],
      // No loaders: the worker is plain JavaScript (see its comment).
      execArgv: [],
    });
    // The thread must not keep a finished process alive; close() ends it explicitly.
    this.worker.unref();
    this.port.unref();
  }

  /** Runs one statement ($1-style parameters) and returns its rows and the rows it changed. */
  query(text: string, values: unknown[] = [], options: { inTransaction?: boolean } = {}): { rows: Record<string, unknown>[]; rowCount: number } {
    if (this.closed) throw new Error("the PostgreSQL store is closed");
    const name = values.length > 0 ? `s_${createHash("sha1").update(text).digest("hex").slice(0, 20)}` : undefined;
    const reply = this.call({ type: "query", text, values, name, inTransaction: options.inTransaction ?? false });
    if (!reply.ok) throw new PostgresError(reply.message, reply.code, reply.detail, reply.constraint);
    return reply;
  }

  /** Ends the connection and the thread. */
  close(): void {
    if (this.closed) return;
    this.call({ type: "close" });
    this.closed = true;
    void this.worker.terminate();
  }

  private call(request: SyncRequest): SyncReply {
    const id = ++this.lastId;
    this.port.postMessage({ ...request, id });
    const deadline = performance.now() + this.replyTimeoutMs;
    for (;;) {
      // Clear the flag before draining: a reply posted after the drain sets it again, so the wait
      // below returns at once. Replies to earlier calls that timed out are dropped.
      Atomics.store(this.signal, 0, 0);
      for (let message = receiveMessageOnPort(this.port); message; message = receiveMessageOnPort(this.port)) {
        const reply = message.message as SyncReply & { id: number };
        if (reply.id === id) return reply;
      }
      const leftMs = deadline - performance.now();
      if (leftMs <= 0) throw new Error(`PostgreSQL did not answer within ${this.replyTimeoutMs} ms; check that the database is reachable`);
      Atomics.wait(this.signal, 0, 0, leftMs);
    }
  }
}
