/**
 * Prepares archives off the request path: run exports and calibration exports. Rows in status
 * `preparing` are the queue (the store is the only state), so an archive that was being made when
 * the process stopped or crashed is simply made again after a restart; a half-written archive is
 * never served because the artifact store writes an object whole or not at all. At most `concurrency` archives
 * are made at once. An archive whose making was started `maxAttempts` times without finishing
 * (the process kept dying on it) is marked failed rather than retried forever, so none stays
 * `preparing` for good. Expiry sweeps run every `sweepMs`.
 *
 * Fairness: queued archives are taken round-robin over accounts, each account's oldest first
 * (fair-queue.ts), counting what other coordinators sharing the store are making (their leases),
 * so one account's full queue never keeps another's export waiting behind all of it.
 */
import { singleFlight } from "../async/single-flight.js";
import { fairOrder } from "./fair-queue.js";

export interface ArchiveJob {
  id: string;
  attempts: number;
  account_id: string;
  created: string;
  /** Until when a coordinator holds it; a row leased past now is being made elsewhere. */
  lease_until: string | null;
}

/** One table of archives the worker prepares. */
export interface ArchiveJobKind<Row extends ArchiveJob = ArchiveJob> {
  /** "export", "calibration export": used in log lines. */
  name: string;
  /** Rows in status preparing, oldest first. */
  listPreparing(): Promise<Row[]>;
  /**
   * Counts a start (attempts + 1) and leases the row to this coordinator until `lease.until`;
   * returns the row, or nothing when it is no longer preparing or another coordinator's lease on
   * it has not run out at `lease.now`.
   */
  claim(id: string, lease: { until: string; now: string }): Promise<Row | undefined>;
  /** Extends this coordinator's lease on a row it is making (`null`: gives it up). */
  renew(id: string, until: string | null): Promise<void>;
  /** Makes the archive and moves the row to ready (or leaves it when purged meanwhile). */
  make(row: Row, signal: AbortSignal): Promise<void>;
  /** Moves a preparing row to failed. */
  fail(id: string, reason: string, message: string): Promise<void>;
  /** Expires what is past its availability; deletes its files. */
  sweep(now: Date): Promise<void>;
}

export interface ArchiveWorkerOptions {
  kinds: ArchiveJobKind<any>[];
  /** Archives made at once. Default 1 (making a LeRobot export keeps ffmpeg busy). */
  concurrency?: number;
  /** Starts allowed per archive before it is failed. Default 3. */
  maxAttempts?: number;
  /** How often the queue is read and expiries swept. Default 60000 ms (a new request kicks it at once). */
  sweepMs?: number;
  now?: () => Date;
  logger?: { error(message: string): void };
}

export interface ArchiveWorker {
  /** Starts the worker; resolves once the first expiry sweep is done (archives are already being made). */
  start(): Promise<void>;
  /** Reads the queue now (after a request inserted a row). */
  kick(): void;
  /** Aborts the archives being made (they stay preparing, redone on the next start) and waits for them and a sweep in progress. */
  stop(): Promise<void>;
  /** Settles when nothing is being made and the queue is empty (tests, benchmarks). */
  idle(): Promise<void>;
}

/** How long a claim on an archive lasts without renewal. */
const LEASE_MS = 60_000;

export function createArchiveWorker(options: ArchiveWorkerOptions): ArchiveWorker {
  const concurrency = options.concurrency ?? 1;
  const maxAttempts = options.maxAttempts ?? 3;
  const sweepMs = options.sweepMs ?? 60_000;
  if (!(concurrency >= 1) || !(maxAttempts >= 1) || !(sweepMs > 0)) {
    throw new Error(`archive worker options must be positive: concurrency ${concurrency}, maxAttempts ${maxAttempts}, sweepMs ${sweepMs}`);
  }
  const now = options.now ?? (() => new Date());
  const logger = options.logger ?? console;
  const inFlight = new Map<string, Promise<void>>();
  let abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let stopped = true;
  let idleWaiters: Array<() => void> = [];
  let leaseTimer: NodeJS.Timeout | undefined;
  /** Account -> the count of starts when this worker last started one of its archives (fair-queue.ts). */
  const lastStarted = new Map<string, number>();
  let starts = 0;

  /**
   * What this coordinator may start now, in fair order. Rows another coordinator holds are left out
   * (claiming them would fail), and a pump is set for when the first of those leases runs out, in
   * case that coordinator died.
   */
  const queued = async () => {
    const at = now().toISOString();
    const rows: Array<{ kind: ArchiveJobKind; row: ArchiveJob }> = [];
    for (const kind of options.kinds) for (const row of await kind.listPreparing()) rows.push({ kind, row });
    const leasedElsewhere = (row: ArchiveJob) => !inFlight.has(row.id) && row.lease_until !== null && row.lease_until >= at;
    const nextExpiry = rows.map(({ row }) => row).filter(leasedElsewhere).map((row) => Date.parse(row.lease_until!)).sort((a, b) => a - b)[0];
    if (nextExpiry !== undefined && !stopped && !leaseTimer) {
      leaseTimer = setTimeout(() => {
        leaseTimer = undefined;
        pump();
      }, Math.max(0, nextExpiry - Date.parse(at)) + 1);
      leaseTimer.unref();
    }
    return fairOrder(rows, ({ row }) => row, ({ row }) => inFlight.has(row.id) || leasedElsewhere(row), (account) => lastStarted.get(account) ?? -1);
  };

  const settleIdle = async () => {
    if (inFlight.size > 0 || (!stopped && (await queued()).length > 0)) return;
    // Read again after the await: a pump may have started a job meanwhile, which queued() then left out as in flight.
    if (inFlight.size > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  };

  const runOne = async (kind: ArchiveJobKind, id: string) => {
    const at = now();
    const leaseUntil = (from: Date) => new Date(from.getTime() + LEASE_MS).toISOString();
    const row = await kind.claim(id, { until: leaseUntil(at), now: at.toISOString() });
    if (!row) return;
    // Several coordinators share the queue: the lease keeps others off this row while it is made,
    // and runs out (LEASE_MS) if this process dies, so another one makes it.
    const renewal = setInterval(() => {
      kind.renew(id, leaseUntil(now())).catch((error: Error) => logger.error(`${kind.name} ${id}: renewing its lease failed: ${error.message}`));
    }, LEASE_MS / 3);
    renewal.unref();
    try {
      await make(kind, row, id);
    } finally {
      clearInterval(renewal);
    }
  };

  const make = async (kind: ArchiveJobKind, row: ArchiveJob, id: string) => {
    if (row.attempts > maxAttempts) {
      await kind.fail(id, "attempts_exhausted", `making this ${kind.name} was started ${maxAttempts} times without finishing (the coordinator stopped each time); request it again`);
      return;
    }
    try {
      await kind.make(row, abort.signal);
    } catch (error) {
      if (abort.signal.aborted) {
        // Stopping: stays preparing, free for the next start (or another coordinator) at once.
        await kind.renew(id, null);
        return;
      }
      const message = (error as Error).message ?? String(error);
      logger.error(`${kind.name} ${id} failed: ${(error as Error).stack ?? message}`);
      await kind.fail(id, "export_error", message);
    }
  };

  // One pump at a time: two at once could both start the same queued row.
  const pumping = singleFlight(async () => {
    if (stopped) return;
    for (const { kind, row } of await queued()) {
      // A stop that came while the queue was read starts nothing more (it waits for this pump, then the jobs).
      if (stopped || inFlight.size >= concurrency) break;
      lastStarted.set(row.account_id, starts++);
      const job = runOne(kind, row.id).finally(() => {
        inFlight.delete(row.id);
        pump();
      });
      inFlight.set(row.id, job);
    }
    await settleIdle();
  }, (error) => logger.error(`archive queue: starting queued work failed: ${(error as Error).stack ?? error}`));
  const pump = () => void pumping.run();

  /** One sweep at a time: a slow one (many deletions from a bucket) is not overlapped by the next tick. */
  let sweeping: Promise<void> | undefined;
  const sweep = (): Promise<void> => {
    sweeping ??= (async () => {
      for (const kind of options.kinds) {
        try {
          await kind.sweep(now());
        } catch (error) {
          logger.error(`${kind.name} expiry sweep failed: ${(error as Error).stack ?? error}`);
        }
      }
    })().finally(() => (sweeping = undefined));
    return sweeping;
  };

  return {
    async start() {
      if (!stopped) return;
      stopped = false;
      abort = new AbortController();
      timer = setInterval(() => {
        void sweep();
        pump();
      }, sweepMs);
      timer.unref();
      const first = sweep();
      pump();
      await first;
    },
    kick() {
      setImmediate(pump);
    },
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      if (leaseTimer) clearTimeout(leaseTimer);
      leaseTimer = undefined;
      abort.abort(new Error("the coordinator is stopping"));
      // The pump first: a job it started while the store was being read must be awaited too, or it would claim its
      // row (a lease) after this returned and the store closed, and the next start would skip the row until the
      // lease ran out.
      await pumping.idle();
      await Promise.allSettled([...inFlight.values(), sweeping]);
      await settleIdle();
    },
    idle() {
      return new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        void settleIdle();
      });
    },
  };
}
