/** Messages between SyncClient and its worker thread (./sync-client-worker.mjs). */

export interface SyncWorkerData {
  /** A SharedArrayBuffer of one Int32: 0 while a reply is pending, 1 once posted. */
  flag: SharedArrayBuffer;
  connectionString: string;
  /** Statements run on every new connection (SET lock_timeout ...). */
  sessionSettings: string[];
}

export type SyncRequest =
  | { type: "query"; text: string; values: unknown[]; name?: string; inTransaction: boolean }
  | { type: "close" };

export type SyncReply =
  | { ok: true; rows: Record<string, unknown>[]; rowCount: number }
  | { ok: false; message: string; code?: string; detail?: string; constraint?: string };

/** On the wire each request and its reply carry the call's id, so a late reply is never taken for the next one. */
export type Tagged<T> = T & { id: number };
