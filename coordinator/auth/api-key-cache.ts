/**
 * The verified API keys a coordinator has seen, so a request need not read `api_keys` each time.
 * Keyed by the secret's sha256 (the secret itself is never held), bounded (least recently used
 * dropped first), and only keys the store holds are kept: an unknown secret is read again on every
 * request, so a key created a moment later is accepted at once.
 *
 * Revocation is honoured on the next request (docs/security.md, "API key cache"):
 *  - on this coordinator, the revoking transaction forgets the key after its commit (`revoke`);
 *  - on PostgreSQL shared with other coordinators, the store's revocation NOTIFYs its key id
 *    (keys-repo.ts) and the cluster bus hands it to `forget` here as soon as it arrives. While the bus
 *    is not listening nothing is cached and every request reads the store; when it listens again the
 *    cache starts empty (it missed whatever was sent meanwhile).
 * A read that was in flight when a key was forgotten is not cached (it may predate the revocation).
 * `ttlMs` bounds how long an entry is trusted in any case: the backstop should a notification be
 * lost without the connection being seen to drop.
 */
import type { Db } from "../store/database.js";
import { findKeyBySecretSha256, revokeKey, type KeyRow } from "../store/keys-repo.js";
import { transact } from "../store/tx.js";

/** What tells the cache of revocations made by other coordinators (the cluster bus). */
export interface KeyRevocationFeed {
  /** True while the feed's connection listens; false while it is down or reconnecting. */
  readonly listening: boolean;
  /**
   * `key-revoked`: forget that key; `lost` / `resync`: the connection dropped / listens again, so
   * anything may have been missed. Other message types are ignored.
   */
  subscribe(listener: (message: { type: string; keyId?: string }) => void): void;
}

export interface ApiKeyCacheOptions {
  db: Db;
  /** Most keys held; beyond it the least recently used is dropped. Default 10 000. */
  maxEntries?: number;
  /** Longest an entry is trusted without reading the store again. Default 60 s. */
  ttlMs?: number;
  /** Revocations by other coordinators on the same PostgreSQL database. Default none: this coordinator alone makes them. */
  revocations?: KeyRevocationFeed;
  /** Injectable clock, milliseconds. Default `performance.now()`. */
  nowMs?: () => number;
}

export const DEFAULT_KEY_CACHE_ENTRIES = 10_000;
export const DEFAULT_KEY_CACHE_TTL_MS = 60_000;

interface CompiledApiKeyCacheOptions {
  db: Db;
  maxEntries: number;
  ttlMs: number;
  revocations: KeyRevocationFeed | undefined;
  nowMs: () => number;
}

const KNOWN = new Set(["db", "maxEntries", "ttlMs", "revocations", "nowMs"]);

export function compileApiKeyCacheOptions(raw: ApiKeyCacheOptions): CompiledApiKeyCacheOptions {
  for (const key of Object.keys(raw)) {
    if (!KNOWN.has(key)) throw new Error(`unknown API key cache option "${key}"; known: ${[...KNOWN].join(", ")}`);
  }
  if (!raw.db) throw new Error(`API key cache option "db" is required`);
  const maxEntries = raw.maxEntries ?? DEFAULT_KEY_CACHE_ENTRIES;
  if (!Number.isInteger(maxEntries) || maxEntries < 0) throw new Error(`API key cache option maxEntries must be a non-negative integer; got ${maxEntries}`);
  const ttlMs = raw.ttlMs ?? DEFAULT_KEY_CACHE_TTL_MS;
  if (!Number.isFinite(ttlMs) || ttlMs < 0) throw new Error(`API key cache option ttlMs must be a non-negative number of milliseconds; got ${ttlMs}`);
  return { db: raw.db, maxEntries, ttlMs, revocations: raw.revocations, nowMs: raw.nowMs ?? (() => performance.now()) };
}

interface Entry {
  row: KeyRow;
  expiresAtMs: number;
}

export class ApiKeyCache {
  private readonly options: CompiledApiKeyCacheOptions;
  /** By secret sha256, least recently used first (a Map keeps insertion order). */
  private readonly entries = new Map<string, Entry>();
  /** Bumped by every forget and clear: a read begun before one is not cached. */
  private generation = 0;

  constructor(raw: ApiKeyCacheOptions) {
    this.options = compileApiKeyCacheOptions(raw);
    this.options.revocations?.subscribe((message) => {
      if (message.type === "key-revoked" && message.keyId) this.forget(message.keyId);
      else if (message.type === "lost" || message.type === "resync") this.clear();
    });
  }

  /** Keys held now. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * The key held for `secretSha256` when it may be trusted now, else undefined (then `find` reads
   * the store). Synchronous, so a request with a known key authenticates without a turn of the loop.
   */
  cached(secretSha256: string): KeyRow | undefined {
    const { revocations, nowMs } = this.options;
    if (revocations && !revocations.listening) {
      // Deaf to other coordinators' revocations: trust nothing held.
      if (this.entries.size > 0) this.clear();
      return undefined;
    }
    const hit = this.entries.get(secretSha256);
    if (!hit) return undefined;
    this.entries.delete(secretSha256);
    if (hit.expiresAtMs <= nowMs()) return undefined;
    this.entries.set(secretSha256, hit);
    return hit.row;
  }

  /** The key whose secret hashes to `secretSha256` (revoked ones included), or undefined. */
  async find(secretSha256: string): Promise<KeyRow | undefined> {
    const { db, revocations } = this.options;
    const held = this.cached(secretSha256);
    if (held) return held;
    const generation = this.generation;
    const row = await findKeyBySecretSha256(db, secretSha256);
    if (row && generation === this.generation && (!revocations || revocations.listening)) this.remember(secretSha256, row);
    return row;
  }

  /**
   * Revokes `keyId` in a transaction on `db` (a `Tx` joins it) and forgets it here once that commits;
   * the store tells the other coordinators. Returns false when it does not exist or already was revoked.
   */
  async revoke(db: Db, keyId: string, at: string): Promise<boolean> {
    return await transact(db, async (tx) => {
      const revoked = await revokeKey(tx, keyId, at);
      tx.afterCommit(() => this.forget(keyId));
      return revoked;
    });
  }

  /** Drops `keyId` (revocations are rare: a scan of at most `maxEntries`). */
  forget(keyId: string): void {
    this.generation += 1;
    for (const [sha256, entry] of this.entries) if (entry.row.id === keyId) this.entries.delete(sha256);
  }

  clear(): void {
    this.generation += 1;
    this.entries.clear();
  }

  private remember(secretSha256: string, row: KeyRow): void {
    const { maxEntries, ttlMs, nowMs } = this.options;
    if (maxEntries === 0) return;
    this.entries.set(secretSha256, { row, expiresAtMs: nowMs() + ttlMs });
    while (this.entries.size > maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }
}
