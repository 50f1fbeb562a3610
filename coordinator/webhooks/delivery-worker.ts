/**
 * Sends due webhook deliveries from the outbox: a signed POST per (event, endpoint); any 2xx
 * acknowledges. Otherwise the attempt is retried after `retryBaseMs * 2^(attempts-1)`, capped at
 * `retryCapMs`, until the event is `maxAgeMs` old, when the delivery is marked failed. Due rows are
 * read from the store on every poll, so deliveries left undelivered by a stop or a crash resume
 * after a restart. Delivery is at least once: a crash between the receiver's 2xx and the store
 * update sends the event again, so receivers dedupe by `Assay-Event-Id`.
 */
import { singleFlight } from "../async/single-flight.js";
import type { Db } from "../store/database.js";
import { leaseDelivery, listDueDeliveries, markDelivered, recordFailedAttempt, type DueDeliveryRow } from "../store/webhooks-repo.js";
import { eventPayload, type WebhookEventRow } from "./outbox.js";
import { postWebhook } from "./post-webhook.js";
import { signatureHeader } from "./signature.js";

export interface WebhookWorkerOptions {
  db: Db;
  /** First retry delay; default 1000 ms. Later ones double. */
  retryBaseMs?: number;
  /** Longest delay between two attempts; default 1 h. */
  retryCapMs?: number;
  /** Give up on an event this old; default 3 days. */
  maxAgeMs?: number;
  /** How often the outbox is read; default 1000 ms. */
  pollMs?: number;
  /** Per-request timeout; default 10000 ms. */
  timeoutMs?: number;
  /** Deliveries sent concurrently at most; default 8. */
  concurrency?: number;
  /** Deliveries to one account's receivers in flight at once, so a slow receiver holds up only its own account; default 2. */
  perAccountConcurrency?: number;
  /** Allow receivers on loopback (tests, the local demo); default false. */
  allowLoopback?: boolean;
  now?: () => Date;
  logger?: { warn(message: string): void; error(message: string): void };
}

export interface WebhookWorker {
  start(): void;
  /** Reads the outbox soon (e.g. right after an event was enqueued). */
  kick(): void;
  /** Stops polling and waits for attempts in flight to settle. */
  stop(): Promise<void>;
}

export const WEBHOOK_DEFAULTS = {
  retryBaseMs: 1000, retryCapMs: 3_600_000, maxAgeMs: 3 * 24 * 3_600_000, pollMs: 1000, timeoutMs: 5000, concurrency: 8, perAccountConcurrency: 2, allowLoopback: false,
};

/** Delay before the retry that follows attempt number `attempts` (1-based). */
export function retryDelayMs(attempts: number, baseMs: number, capMs: number): number {
  return Math.min(capMs, baseMs * 2 ** Math.max(0, attempts - 1));
}

type DueRow = DueDeliveryRow;

/** How long past its timeout an attempt's claim lasts before another coordinator may retry it. */
const CLAIM_MARGIN_MS = 30_000;

export function createWebhookWorker(options: WebhookWorkerOptions): WebhookWorker {
  const o = { ...WEBHOOK_DEFAULTS, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) } as Required<WebhookWorkerOptions>;
  for (const key of ["retryBaseMs", "retryCapMs", "maxAgeMs", "pollMs", "timeoutMs", "concurrency", "perAccountConcurrency"] as const) {
    if (!(o[key] > 0)) throw new Error(`webhook option ${key} must be a positive number; got ${o[key]}`);
  }
  const now = options.now ?? (() => new Date());
  const logger = options.logger ?? console;
  const inFlight = new Map<string, Promise<void>>();
  const inFlightByAccount = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;
  let kicked: NodeJS.Immediate | undefined;
  let stopped = true;
  let abort = new AbortController();

  async function due(limit: number): Promise<DueRow[]> {
    return await listDueDeliveries(o.db, now().toISOString(), limit);
  }

  /**
   * Takes the delivery for this attempt: moves its next_attempt_at past the attempt's end, if no
   * other coordinator on the same database did first. A coordinator that dies mid-attempt leaves
   * the lease to run out, and another one retries (deliveries are at least once).
   */
  async function claim(row: DueRow): Promise<boolean> {
    const leaseUntil = new Date(now().getTime() + o.timeoutMs + CLAIM_MARGIN_MS).toISOString();
    return await leaseDelivery(o.db, row.event_id, row.endpoint_id, row.next_attempt_at, leaseUntil);
  }

  async function attempt(row: DueRow): Promise<void> {
    const event: WebhookEventRow = { id: row.ev_id, account_id: row.ev_account, type: row.ev_type as WebhookEventRow["type"], created: row.ev_created, data: row.ev_data };
    const body = eventPayload(event);
    let status: number | null = null;
    let error: string | null = null;
    try {
      status = await postWebhook(row.url, {
        "content-type": "application/json",
        "user-agent": "Assay-Webhooks/1",
        "assay-event-id": event.id,
        "assay-event-type": event.type,
        "assay-signature": signatureHeader(row.secret, Math.floor(now().getTime() / 1000), body),
      }, body, { policy: { allowLoopback: o.allowLoopback }, timeoutMs: o.timeoutMs, signal: abort.signal });
      if (status < 200 || status > 299) error = `HTTP ${status}`;
    } catch (e) {
      error = (e as Error).message || String(e);
    }
    const at = now();
    const attempts = row.attempts + 1;
    if (error === null) {
      await markDelivered(o.db, row.event_id, row.endpoint_id, attempts, status, at.toISOString());
      return;
    }
    const next = new Date(at.getTime() + retryDelayMs(attempts, o.retryBaseMs, o.retryCapMs));
    const giveUp = next.getTime() - Date.parse(event.created) > o.maxAgeMs;
    await recordFailedAttempt(o.db, row.event_id, row.endpoint_id, { attempts, status, error: error.slice(0, 500), nextAttemptAt: giveUp ? null : next.toISOString() });
    if (giveUp) logger.warn(`webhooks: gave up on event ${event.id} for endpoint ${row.endpoint_id} after ${attempts} attempts (${error})`);
  }

  // One poll at a time: two at once could both read the same free slots.
  const polling = singleFlight(async () => {
    if (stopped) return;
      const free = o.concurrency - inFlight.size;
      if (free <= 0) return;
      // Read past the slots: rows of an account at its own limit must not keep other accounts waiting.
      for (const row of await due(4 * o.concurrency + inFlight.size)) {
        const key = `${row.event_id}/${row.endpoint_id}`;
        if (inFlight.has(key) || inFlight.size >= o.concurrency) continue;
        const account = row.ev_account;
        if ((inFlightByAccount.get(account) ?? 0) >= o.perAccountConcurrency) continue;
        if (!await claim(row)) continue;
        inFlightByAccount.set(account, (inFlightByAccount.get(account) ?? 0) + 1);
        const done = attempt(row)
          .catch((error: Error) => logger.error(`webhooks: delivery of ${key} failed: ${error.stack ?? error}`))
          .finally(() => {
            inFlight.delete(key);
            const left = (inFlightByAccount.get(account) ?? 1) - 1;
            if (left > 0) inFlightByAccount.set(account, left);
            else inFlightByAccount.delete(account);
            kick();
          });
        inFlight.set(key, done);
      }
  }, (error) => logger.error(`webhooks: outbox poll failed: ${(error as Error).stack ?? error}`));
  const poll = () => void polling.run();

  function kick(): void {
    if (stopped || kicked) return;
    kicked = setImmediate(() => {
      kicked = undefined;
      poll();
    });
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      abort = new AbortController();
      timer = setInterval(poll, o.pollMs);
      timer.unref();
      kick();
    },
    kick,
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = undefined;
      if (kicked) clearImmediate(kicked);
      kicked = undefined;
      // Attempts cut short here are recorded as failed and retried after the next start.
      abort.abort(new Error("the coordinator is stopping"));
      await polling.idle();
      await Promise.allSettled([...inFlight.values()]);
    },
  };
}
