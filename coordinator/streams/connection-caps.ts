/**
 * Caps on long-lived connections per key and per account, one budget per kind (event streams, MJPEG
 * viewers, signalling WebSockets), so one customer cannot hold sockets, encoders and memory without
 * bound. `acquire()` is called before the response or upgrade starts and throws 429 rate_limited
 * (with Retry-After and a message naming the cap) when the key or the account is at its cap; the
 * returned release is idempotent and is called when the connection closes. In memory: each
 * coordinator counts the connections it serves (a forwarded view counts on the coordinator serving it).
 */
import { AssayError } from "../errors/assay-error.js";

export type ConnectionKind = "event_streams" | "mjpeg_viewers" | "signalling_websockets";

const KINDS: readonly ConnectionKind[] = ["event_streams", "mjpeg_viewers", "signalling_websockets"];

/** What one kind's cap is called in a 429 message. */
const NAMES: Record<ConnectionKind, string> = {
  event_streams: "event streams",
  mjpeg_viewers: "MJPEG viewers",
  signalling_websockets: "WebRTC signalling WebSockets",
};

export interface ConnectionCap {
  perKey: number;
  perAccount: number;
}

export type ConnectionCapsOptions = Partial<Record<ConnectionKind, Partial<ConnectionCap>>> & {
  /** Retry-After of a refusal, in seconds; default 5. */
  retryAfterS?: number;
};

export type CompiledConnectionCapsOptions = Record<ConnectionKind, ConnectionCap> & { retryAfterS: number };

/** 10 open per key and 30 per account, for each kind. */
export const DEFAULT_CONNECTION_CAP: ConnectionCap = { perKey: 10, perAccount: 30 };

/** Fills defaults and rejects unknown kinds or caps that are not positive whole numbers. */
export function compileConnectionCapsOptions(options: ConnectionCapsOptions = {}): CompiledConnectionCapsOptions {
  const known = [...KINDS, "retryAfterS"];
  const unknown = Object.keys(options).filter((k) => !known.includes(k));
  if (unknown.length) throw new Error(`unknown connection cap(s): ${unknown.join(", ")}; known: ${known.join(", ")}`);
  const compiled = { retryAfterS: options.retryAfterS ?? 5 } as CompiledConnectionCapsOptions;
  if (!(Number.isInteger(compiled.retryAfterS) && compiled.retryAfterS >= 1)) throw new Error(`connection caps retryAfterS must be a whole number of seconds >= 1; got ${compiled.retryAfterS}`);
  for (const kind of KINDS) {
    const given = options[kind] ?? {};
    const unknownFields = Object.keys(given).filter((k) => k !== "perKey" && k !== "perAccount");
    if (unknownFields.length) throw new Error(`unknown field(s) in connection cap ${kind}: ${unknownFields.join(", ")}; known: perKey, perAccount`);
    const cap = { ...DEFAULT_CONNECTION_CAP, ...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) } as ConnectionCap;
    for (const field of ["perKey", "perAccount"] as const) {
      if (!(Number.isInteger(cap[field]) && cap[field] >= 1)) throw new Error(`connection cap ${kind}.${field} must be a whole number >= 1; got ${cap[field]}`);
    }
    compiled[kind] = cap;
  }
  return compiled;
}

export class ConnectionCaps {
  private readonly open = new Map<string, number>();
  private readonly options: CompiledConnectionCapsOptions;

  constructor(options: ConnectionCapsOptions = {}) {
    this.options = compileConnectionCapsOptions(options);
  }

  /** The caps in force. */
  get caps(): CompiledConnectionCapsOptions {
    return this.options;
  }

  /** Connections of `kind` open now for a key or an account. */
  count(kind: ConnectionKind, who: { keyId: string } | { accountId: string }): number {
    return this.open.get("keyId" in who ? `${kind}/key/${who.keyId}` : `${kind}/account/${who.accountId}`) ?? 0;
  }

  /** Counts one more connection of `kind`, or throws 429 rate_limited naming the cap it would pass. */
  acquire(kind: ConnectionKind, keyId: string, accountId: string): () => void {
    const { perKey, perAccount } = this.options[kind];
    const keySlot = `${kind}/key/${keyId}`;
    const accountSlot = `${kind}/account/${accountId}`;
    const over = (this.open.get(keySlot) ?? 0) >= perKey
      ? `this key has ${perKey} ${NAMES[kind]} open, the most allowed per key`
      : (this.open.get(accountSlot) ?? 0) >= perAccount
        ? `this account has ${perAccount} ${NAMES[kind]} open, the most allowed per account`
        : null;
    if (over) throw new AssayError("rate_limited", `${over}; close one and retry`, { retryAfterS: this.options.retryAfterS });
    this.add(keySlot, 1);
    this.add(accountSlot, 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.add(keySlot, -1);
      this.add(accountSlot, -1);
    };
  }

  private add(slot: string, delta: number): void {
    const n = (this.open.get(slot) ?? 0) + delta;
    if (n > 0) this.open.set(slot, n);
    else this.open.delete(slot);
  }
}
