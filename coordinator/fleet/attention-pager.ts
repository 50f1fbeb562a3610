/**
 * Pages people (issue 26 item 6): a cell that has waited on a person (a reset to set, an episode to
 * judge) for `afterMs` raises webhook event `cell.attention_needed` once per attention episode, to the
 * operator account's endpoints (docs/operators.md, "Paging"; docs/api.md, "Webhooks").
 *
 * One timer per open attention, armed when the cell says what it needs and disarmed when it says it
 * needs nothing more (or its link closes): no loop over the fleet. The attention's identity is
 * (cell, kind, episode, since); the store remembers which raised their page, so a coordinator that
 * learns an attention again (the cell re-sends it after a reconnect or a coordinator restart) raises
 * it at once if it is due and never a second time.
 */
import type { Db } from "../store/database.js";
import { claimAttentionPage, setAttentionPageEvent, type AttentionPageKey } from "../store/attention-pages-repo.js";
import { enqueueEvent } from "../webhooks/outbox.js";
import type { CellAttention } from "../cells/fleet-view.js";
import type { Logger } from "../scheduler/scheduler.js";
import { transact } from "../store/tx.js";

/** Default wait before a person is paged: 2 minutes. */
export const DEFAULT_ATTENTION_PAGE_MS = 120_000;

/** setTimeout's longest delay; a later page is re-armed when this one fires. */
const MAX_TIMER_MS = 2_147_483_647;

export interface PagerTimers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

export interface AttentionPagerOptions {
  /** How long a cell waits on a person before the page is raised (ms, > 0). */
  afterMs: number;
  /**
   * Raises the page of this attention at `at`; false when it was raised before
   * (by this or an earlier coordinator). See `outboxPage`.
   */
  raise(key: AttentionPageKey, at: Date): Promise<boolean>;
  /** Milliseconds clock; default Date.now. */
  now?: () => number;
  /** Timers; default setTimeout/clearTimeout (unref'd). Injectable for tests. */
  timers?: PagerTimers;
  logger?: Pick<Logger, "info" | "error">;
}

const realTimers: PagerTimers = {
  set: (fn, ms) => setTimeout(fn, ms).unref(),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

interface Armed {
  key: AttentionPageKey;
  /** The timer; null once it fired (the attention stays known, so a repeat of it is not armed again). */
  handle: unknown;
}

export class AttentionPager {
  private readonly armed = new Map<string, Armed>();
  private readonly afterMs: number;
  private readonly now: () => number;
  private readonly timers: PagerTimers;
  private readonly raise: (key: AttentionPageKey, at: Date) => Promise<boolean>;
  /** Pages being raised now (each awaits the store); stop() waits for them. */
  private readonly raising = new Set<Promise<void>>();
  private readonly logger: Pick<Logger, "info" | "error">;

  constructor(options: AttentionPagerOptions) {
    if (!(Number.isFinite(options.afterMs) && options.afterMs > 0)) {
      throw new Error(`attentionPageMs must be a positive number of milliseconds; got ${options.afterMs}`);
    }
    this.afterMs = options.afterMs;
    this.now = options.now ?? Date.now;
    this.timers = options.timers ?? realTimers;
    this.raise = options.raise;
    this.logger = options.logger ?? console;
  }

  /** The cell's attention now (undefined: it needs nobody, or its link closed). */
  observe(cellId: string, attention: Pick<CellAttention, "kind" | "episodeId" | "since"> | undefined): void {
    const current = this.armed.get(cellId);
    if (attention && current && sameKey(current.key, { cellId, ...attention })) return;
    if (current) {
      if (current.handle !== null) this.timers.clear(current.handle);
      this.armed.delete(cellId);
    }
    if (!attention) return;
    this.arm({ cellId, kind: attention.kind, episodeId: attention.episodeId, since: attention.since });
  }

  /** Disarms every timer, and waits for pages being raised now. */
  async stop(): Promise<void> {
    for (const { handle } of this.armed.values()) if (handle !== null) this.timers.clear(handle);
    this.armed.clear();
    await Promise.allSettled([...this.raising]);
  }

  private arm(key: AttentionPageKey): void {
    const sinceMs = Date.parse(key.since);
    const dueMs = (Number.isFinite(sinceMs) ? sinceMs : this.now()) + this.afterMs;
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, dueMs - this.now()));
    const handle = this.timers.set(() => {
      const raised = this.fire(key, dueMs).finally(() => this.raising.delete(raised));
      this.raising.add(raised);
    }, delay);
    this.armed.set(key.cellId, { key, handle });
  }

  private async fire(key: AttentionPageKey, dueMs: number): Promise<void> {
    const armed = this.armed.get(key.cellId);
    if (!armed || armed.handle === null || !sameKey(armed.key, key)) return;
    if (this.now() < dueMs) {
      this.arm(key);
      return;
    }
    armed.handle = null;
    try {
      if (await this.raise(key, new Date(this.now()))) {
        this.logger.info(`cell ${key.cellId}: waited on a person (${key.kind} of episode ${key.episodeId}) since ${key.since}; cell.attention_needed raised`);
      }
    } catch (error) {
      this.logger.error(`cell ${key.cellId}: raising cell.attention_needed failed: ${(error as Error).message}`);
    }
  }
}

function sameKey(a: AttentionPageKey, b: AttentionPageKey): boolean {
  return a.cellId === b.cellId && a.kind === b.kind && a.episodeId === b.episodeId && a.since === b.since;
}

/** What a person is asked to do, in words, per attention kind. */
export const ATTENTION_NEEDS: Record<AttentionPageKey["kind"], string> = {
  reset: "set the scene, then press Scene ready",
  label: "judge the finished episode: success or failure",
  intervene: "help the paused episode, then press Done",
};

/** The event's data: `{cell, kind, needs, episode_id, since, waiting_s}`. */
export function attentionEventData(key: AttentionPageKey, at: Date): Record<string, unknown> {
  const waitedMs = Math.max(0, at.getTime() - Date.parse(key.since));
  return {
    cell: key.cellId,
    kind: key.kind,
    needs: ATTENTION_NEEDS[key.kind],
    episode_id: key.episodeId,
    since: key.since,
    waiting_s: Math.round(waitedMs / 100) / 10,
  };
}

/**
 * `raise` through the webhook outbox: claims the page and queues `cell.attention_needed` for the
 * operator account in one transaction (both commit or neither), then calls `queued` (the delivery
 * worker's kick). Only the operator account's endpoints receive it: cells belong to the operator,
 * never to a customer whose run an episode may be.
 */
export function outboxPage(db: Db, operatorAccountId: string, queued: () => void): (key: AttentionPageKey, at: Date) => Promise<boolean> {
  return async (key, at) => {
    const raised = await transact(db, async (tx) => {
      if (!await claimAttentionPage(tx, key, at)) return false;
      const eventId = await enqueueEvent(tx, operatorAccountId, "cell.attention_needed", attentionEventData(key, at), at);
      await setAttentionPageEvent(tx, key, eventId);
      return true;
    });
    if (raised) queued();
    return raised;
  };
}
