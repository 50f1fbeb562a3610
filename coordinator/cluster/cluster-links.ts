/**
 * The fleet side of several coordinators on one database: this coordinator records the cells whose
 * streams it holds (cell_links) and keeps their views fresh, lists the whole fleet from that table,
 * passes messages for cells held elsewhere over the cluster bus, and delivers what other
 * coordinators send: run events to its SSE clients, messages to its cells, scheduling nudges.
 */
import { serialQueue } from "../async/serial-queue.js";
import { singleFlight } from "../async/single-flight.js";
import { CoordinatorMessage } from "../../protocol/gen/cell.js";
import type { ConnectedCell, FleetView } from "../cells/fleet-view.js";
import type { CellRegistry, CellSession } from "../cells/registry.js";
import { LinkError } from "../errors/link-errors.js";
import type { RunEvents } from "../runs/run-events.js";
import type { Db } from "../store/database.js";
import { findCoordinator } from "../store/coordinators-repo.js";
import { findCellHoldingRun } from "../store/episodes-repo.js";
import { getCellLink, liveCellLinks, recordCellLink, refreshCellLinks, removeCellLink } from "../store/cell-links-repo.js";
import type { ClusterBus } from "./cluster-bus.js";
import type { LiveForwarding } from "../streams/live-forwarding.js";

export interface ClusterLinks {
  readonly coordinatorId: string;
  /**
   * A session opened here: records that this coordinator holds the cell's stream. Returns the
   * coordinator that held it before, when another live one did (its stream is closed there, and
   * what the cell held is requeued, as for a local reconnect).
   */
  opened(session: CellSession): Promise<string | undefined>;
  /**
   * A session here ended. False when the cell's link already belongs to a newer session (the cell
   * moved to another coordinator): then nothing it holds may be requeued from here.
   */
  closed(session: CellSession, stopping: boolean): Promise<boolean>;
  /** Whether another coordinator, alive or gone for less than `graceMs`, holds the cell's stream. */
  heldElsewhere(cellId: string, graceMs: number): Promise<boolean>;
  /** Sends a message to a cell whose stream another live coordinator holds; false when none does. */
  relay(cellId: string, message: CoordinatorMessage): Promise<boolean>;
  /** Live views of cells held elsewhere go to their holder. */
  readonly forwarding: LiveForwarding;
  /**
   * The whole fleet: cells connected here and to the other live coordinators. `session(cellId)`
   * closes a cell's stream wherever it is held (revoking a cell).
   */
  readonly fleet: FleetView & { session(cellId: string): Promise<{ close(error: LinkError): void } | undefined> };
}

export interface JoinClusterOptions {
  db: Db;
  bus: ClusterBus;
  coordinatorId: string;
  registry: CellRegistry;
  runEvents: RunEvents;
  /** A pass of this coordinator's scheduler (for its own cells), without telling the others. */
  kickLocal: () => void;
  /** How often the views of this coordinator's cells are written. Default 2000 ms. */
  refreshMs?: number;
  now: () => Date;
  logger: { info(message: string): void; warn(message: string): void; error(message: string): void };
}

export function joinCluster(options: JoinClusterOptions): ClusterLinks & { stop(): Promise<void> } {
  const { db, bus, coordinatorId, registry, runEvents, now, logger } = options;
  /** Sessions closed because the cell moved to another coordinator: their end requeues nothing. */
  const superseded = new WeakSet<CellSession>();
  const written = new Map<string, string>();

  const viewOf = (cellId: string): ConnectedCell | undefined => registry.localCells().find((c) => c.cellId === cellId);

  // Deliveries one after another, in the bus's order (a relayed start must not overtake its cancel).
  const deliveries = serialQueue((error) => logger.error(`cluster: a bus message failed: ${(error as Error).stack ?? error}`));
  bus.subscribe((message) => void deliveries.push(async () => {
    switch (message.type) {
      case "run-event":
        runEvents.deliver(message.event);
        break;
      case "cell":
        await registry.sendToCell(message.cellId, CoordinatorMessage.fromJSON(message.message), { relay: false });
        break;
      case "superseded": {
        const session = registry.session(message.cellId);
        if (session?.sessionId !== message.sessionId) break;
        superseded.add(session);
        session.close(new LinkError("superseded", `cell ${message.cellId} connected to another coordinator; this stream is closed`));
        break;
      }
      case "close-cell": {
        const session = registry.session(message.cellId);
        if (session?.sessionId === message.sessionId) session.close(new LinkError(message.reason, message.message));
        break;
      }
      case "kick":
      case "resync":
        options.kickLocal();
        break;
    }
  }));

  // The views that changed since they were last written, all in a few statements (refreshCellLinks): a fleet's cells
  // change view every episode, and a write (a commit) per cell cost the store one per episode.
  const refreshing = singleFlight(async () => {
    const changed: Array<{ cellId: string; sessionId: string; view: object; json: string }> = [];
    for (const cell of registry.localCells()) {
      const json = JSON.stringify(cell);
      if (written.get(cell.cellId) === json) continue;
      const session = registry.session(cell.cellId);
      if (session) changed.push({ cellId: cell.cellId, sessionId: session.sessionId, view: cell, json });
    }
    if (changed.length === 0) return;
    const refreshed = await refreshCellLinks(db, changed, now().toISOString());
    for (const link of changed) if (refreshed.has(link.cellId)) written.set(link.cellId, link.json);
  }, (error) => logger.error(`cluster: refreshing this coordinator's cell views failed: ${(error as Error).message}`));
  const refresh = setInterval(() => void refreshing.run(), options.refreshMs ?? 2000);
  refresh.unref();

  let relayed: Promise<boolean> = Promise.resolve(true);
  const liveHolder = async (cellId: string, graceMs: number) => {
    const link = await getCellLink(db, cellId);
    if (!link || link.coordinator_id === coordinatorId) return undefined;
    const holder = await findCoordinator(db, link.coordinator_id);
    if (!holder || Date.parse(holder.alive_until) < now().getTime() - graceMs) return undefined;
    return link;
  };

  return {
    coordinatorId,
    async opened(session) {
      const before = await liveHolder(session.cellId, 0);
      const view = viewOf(session.cellId);
      if (!view) throw new Error(`cluster: cell ${session.cellId} opened a session the registry does not list`);
      await recordCellLink(db, { cellId: session.cellId, coordinatorId, sessionId: session.sessionId, connectedAt: session.connectedAt, view, at: now().toISOString() });
      written.set(session.cellId, JSON.stringify(view));
      if (!before) return undefined;
      bus.publish({ type: "superseded", cellId: session.cellId, sessionId: before.session_id });
      return before.coordinator_id;
    },
    async closed(session, stopping) {
      written.delete(session.cellId);
      if (superseded.has(session)) return false;
      // A clean stop leaves the row: the lease ends with the process, and the cell's next
      // coordinator replaces the row when it reconnects there.
      if (stopping) return false;
      return removeCellLink(db, session.cellId, session.sessionId);
    },
    async heldElsewhere(cellId, graceMs) {
      return await liveHolder(cellId, graceMs) !== undefined;
    },
    forwarding: {
      async holderOf(cellId) {
        if (registry.session(cellId)) return undefined;
        const link = await liveHolder(cellId, 0);
        if (!link) return undefined;
        return (await findCoordinator(db, link.coordinator_id))?.base_url;
      },
      cellOfRun(runId) {
        return findCellHoldingRun(db, runId);
      },
    },
    relay(cellId, message) {
      // In call order: each relay reads the holder from the store first, and a later message must not
      // overtake an earlier one on the bus.
      const turn = relayed.then(async () => {
        if (!await liveHolder(cellId, 0)) return false;
        bus.publish({ type: "cell", cellId, message: CoordinatorMessage.toJSON(message) });
        return true;
      });
      relayed = turn.catch(() => false);
      return turn;
    },
    fleet: {
      async connectedCells() {
        const local = registry.localCells();
        const here = new Set(local.map((c) => c.cellId));
        const remote = (await liveCellLinks(db, now()))
          .filter((link) => link.coordinator_id !== coordinatorId && !here.has(link.cell_id))
          .map((link) => JSON.parse(link.view) as ConnectedCell);
        return [...local, ...remote].sort((a, b) => a.cellId.localeCompare(b.cellId));
      },
      assignedEpisodeOf(cellId) {
        return registry.assignedEpisodeOf(cellId);
      },
      async session(cellId) {
        const local = registry.session(cellId);
        if (local) return local;
        const link = await liveHolder(cellId, 0);
        if (!link) return undefined;
        return { close: (error: LinkError) => bus.publish({ type: "close-cell", cellId, sessionId: link.session_id, reason: error.reason, message: error.message }) };
      },
    },
    async stop() {
      clearInterval(refresh);
      await refreshing.idle();
      await deliveries.idle();
    },
  };
}
