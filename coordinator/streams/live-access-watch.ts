/**
 * Access to a live view is checked for as long as the view is open, not only when it opens. Each
 * open view (an MJPEG response, a signalling WebSocket with its WebRTC session; a view forwarded from
 * another coordinator is served, and so bound, here) is bound with the ViewerGrant that admitted it
 * and a `close(reason)`. The grant is asked again (stream-access.ts `grantLapse`):
 * - when the coordinator gives one of the cell's episodes or takes it back (the cell registry's
 *   assignment event). A customer's view of another run than the one the cell was just given is
 *   closed in that same turn, before the episode is even sent to the cell, so no frame of another
 *   account's episode can reach it; the other views are then asked again;
 * - when a status event of the run the grant names is published (here or relayed by another
 *   coordinator), so a run that ends closes its views;
 * - when `recheck()` is called (a key revoked);
 * - and every `recheckMs` while any view is open, as a backstop (token expiry, changes made by
 *   another coordinator that no event here reports).
 * A lapsed view is closed once, with the reason. Nothing runs while no view is open.
 */
import type { FleetView } from "../cells/fleet-view.js";
import type { RunEvent, RunEvents } from "../runs/run-events.js";
import type { Db } from "../store/database.js";
import { grantLapse, type ViewerGrant } from "./stream-access.js";

export interface LiveAccess {
  /** Binds an open view to its grant; `close(reason)` is called once if the grant lapses. Returns the unbind function. */
  bind(grant: ViewerGrant, close: (reason: string) => void): Promise<() => void>;
  /** Asks again for every open view (of one cell, when given), now. */
  recheck(cellId?: string): Promise<void>;
  /** Unbinds every view (without closing it) and stops the backstop. */
  stop(): void;
}

export interface LiveAccessWatchOptions {
  db: Db;
  fleet: FleetView;
  runEvents: RunEvents;
  /**
   * Where a cell's assignment changes are announced, synchronously, with the run of the episode given
   * (the cell registry). Default none: the backstop alone.
   */
  assignments?: { onAssignmentChange(listener: (cellId: string, change: { runId: string | undefined }) => void): () => void };
  now?: () => Date;
  /** The backstop re-check period while views are open; default 5000 ms. */
  recheckMs?: number;
  /** Where a failed re-check is logged; default console. */
  logger?: { error(message: string): void };
}

export const DEFAULT_LIVE_RECHECK_MS = 5000;

interface BoundView {
  grant: ViewerGrant;
  close(reason: string): void;
  unsubscribeRun?: () => void;
}

export function createLiveAccessWatch(options: LiveAccessWatchOptions): LiveAccess {
  const { db, fleet, runEvents } = options;
  const now = options.now ?? (() => new Date());
  const recheckMs = options.recheckMs ?? DEFAULT_LIVE_RECHECK_MS;
  if (!(recheckMs > 0)) throw new Error(`live access recheckMs must be a positive number of milliseconds; got ${recheckMs}`);
  const logger = options.logger ?? console;
  const views = new Set<BoundView>();
  let backstop: ReturnType<typeof setInterval> | undefined;

  const unbind = (view: BoundView): void => {
    if (!views.delete(view)) return;
    view.unsubscribeRun?.();
    if (views.size === 0 && backstop) {
      clearInterval(backstop);
      backstop = undefined;
    }
  };

  const lapse = (view: BoundView, reason: string): void => {
    unbind(view);
    view.close(reason);
  };

  const check = async (view: BoundView): Promise<void> => {
    let reason: string | null;
    try {
      reason = await grantLapse(db, fleet, view.grant, now());
    } catch (error) {
      // A store that cannot answer cannot vouch for the grant either.
      logger.error(`live access re-check of cell ${view.grant.cellId} failed: ${(error as Error).message}`);
      reason = "access could not be checked";
    }
    // Checks may overlap (a status event during the backstop's): the view is closed once.
    if (reason === null || !views.has(view)) return;
    lapse(view, reason);
  };

  const recheck = async (cellId?: string): Promise<void> => {
    for (const view of [...views]) if (cellId === undefined || view.grant.cellId === cellId) await check(view);
  };

  // The cell was given an episode of `runId`: a view bound to another run closes now, in the turn that
  // sends the episode to the cell (the store's answer would come turns later, after frames of the new
  // episode might have arrived). Every other view of the cell is asked again once the change is in
  // place (the scheduler's transaction has finished).
  const stopAssignments = options.assignments?.onAssignmentChange((cellId, { runId }) => {
    if (runId !== undefined) {
      for (const view of [...views]) {
        if (view.grant.cellId === cellId && view.grant.runId !== null && view.grant.runId !== runId) lapse(view, "the cell moved on to another run");
      }
    }
    queueMicrotask(() => void recheck(cellId));
  });

  return {
    async bind(grant, close) {
      const view: BoundView = { grant, close };
      views.add(view);
      if (grant.runId !== null) {
        view.unsubscribeRun = runEvents.subscribe(grant.runId, (event: RunEvent) => {
          if (event.type === "status") void check(view);
        });
      }
      if (!backstop) {
        backstop = setInterval(() => void recheck(), recheckMs);
        backstop.unref();
      }
      // The grant may have lapsed between admission and binding (a WebSocket upgrade takes a turn).
      await check(view);
      return () => unbind(view);
    },
    recheck,
    stop() {
      stopAssignments?.();
      for (const view of [...views]) unbind(view);
    },
  };
}
