/**
 * The live fleet: one entry per cell with an open CellLink stream, holding its Hello, the state
 * its heartbeats report, and the episode the coordinator has given it. In memory only; the
 * durable facts (episodes held, seq applied) are in the store.
 */
import { installationOf, type FirmwarePins } from "../../firmware-pins/pins.js";
import type { Attention, CoordinatorMessage, Heartbeat, Hello, SafetyEvent } from "../../protocol/gen/cell.js";
import type { CellAttention, ConnectedCell, FleetView } from "./fleet-view.js";
import type { LinkError } from "../errors/link-errors.js";

/** A cell's live link, created by the Connect handler after a valid Hello. */
export interface CellSession {
  readonly cellId: string;
  readonly sessionId: string;
  readonly hello: Hello;
  readonly connectedAt: string;
  /** Writes a message on the cell's stream. */
  send(message: CoordinatorMessage): void;
  /** Ends the stream with the error's status; the Connect handler then detaches the session. */
  close(error: LinkError): void;
}

/** Heartbeat states about the episode a cell runs; ended with that episode (not estopped, held, firmware_mismatch). */
const EPISODE_STATES = new Set(["busy", "awaiting_reset", "awaiting_label", "intervening"]);

interface Entry {
  session: CellSession;
  lastHeardMs: number;
  /** Plain-words reason the cell gets no work, or null when its firmware matches its pin. */
  firmwareMismatch: string | null;
  reportedState: string;
  reportedEpisodeId: string;
  dutyCyclePct: number;
  estopped: boolean;
  /** Instruments of the Hello the latest heartbeat says stopped answering. */
  instrumentsDown: Array<{ kind: string; name: string }>;
  /** Episode the coordinator assigned and has not seen finish or fail. */
  assignedEpisodeId?: string;
  /** What the cell last said it needs from a person (Attention); undefined when nothing. */
  attention?: CellAttention;
}

export interface CellRegistryOptions {
  pins: FirmwarePins;
  /**
   * Sends a message to a cell whose stream another coordinator holds (coordinator/cluster/); false
   * when none does. Default: none (one coordinator).
   */
  relay?: (cellId: string, message: CoordinatorMessage) => Promise<boolean>;
  /** Milliseconds clock (default Date.now); injectable for tests. */
  now?: () => number;
}

/** What an assignment event says: the run of the episode given, or undefined when one was taken back. */
export interface AssignmentChange {
  runId: string | undefined;
}

export class CellRegistry implements FleetView {
  private readonly entries = new Map<string, Entry>();
  /** The entries by cell id, as localCells lists them; dropped when a session attaches or detaches. */
  private ordered: Entry[] | undefined;
  private readonly pins: FirmwarePins;
  private readonly now: () => number;
  private readonly relay: ((cellId: string, message: CoordinatorMessage) => Promise<boolean>) | undefined;
  private readonly assignmentListeners = new Set<(cellId: string, change: AssignmentChange) => void>();
  private readonly attentionListeners = new Set<(cellId: string, attention: CellAttention | undefined) => void>();

  constructor(options: CellRegistryOptions) {
    this.pins = options.pins;
    this.now = options.now ?? Date.now;
    this.relay = options.relay;
  }

  /**
   * Why this Hello's robot may not take work here, in plain words, or null when the reported model
   * and firmware equal the firmware-pins installation for the cell.
   */
  firmwareProblem(hello: Hello): string | null {
    const installed = installationOf(this.pins, hello.cellId);
    if (!installed) {
      return `cell ${hello.cellId} is not in firmware-pins/installations.json, so nothing says what it should run; add it there before it takes work`;
    }
    if (installed.model !== hello.robotModel || installed.firmware !== hello.firmware) {
      return (
        `cell ${hello.cellId} reports ${hello.robotModel}@${hello.firmware} but firmware-pins/installations.json pins ` +
        `${installed.model}@${installed.firmware}; flash the pinned firmware (or update the pin) and reconnect`
      );
    }
    return null;
  }

  /**
   * Registers a session; returns the session it displaced for the same cell, if any. A Hello that
   * names an interrupted episode counts as busy with it until the first heartbeat says otherwise:
   * an agent whose link dropped while it was stalled mid-episode (its stream closed for silence)
   * may still be running that episode when it reconnects, and work offered to it then is declined.
   */
  attach(session: CellSession): CellSession | undefined {
    const previous = this.entries.get(session.cellId)?.session;
    const hello = session.hello;
    this.ordered = undefined;
    this.entries.set(session.cellId, {
      session,
      lastHeardMs: this.now(),
      firmwareMismatch: this.firmwareProblem(hello),
      reportedState: hello.interruptedEpisodeId ? "busy" : "idle",
      reportedEpisodeId: hello.interruptedEpisodeId,
      dutyCyclePct: 0,
      estopped: hello.safetyState === "estopped",
      instrumentsDown: [],
    });
    return previous;
  }

  /** Removes the session if it is still the cell's current one; returns whether it was. */
  detach(session: CellSession): boolean {
    const entry = this.entries.get(session.cellId);
    if (!entry || entry.session !== session) return false;
    this.entries.delete(session.cellId);
    this.ordered = undefined;
    if (entry.attention) this.attentionChanged(session.cellId, undefined);
    return true;
  }

  session(cellId: string): CellSession | undefined {
    return this.entries.get(cellId)?.session;
  }

  isCurrent(session: CellSession): boolean {
    return this.entries.get(session.cellId)?.session === session;
  }

  firmwareMismatchOf(cellId: string): string | null {
    return this.entries.get(cellId)?.firmwareMismatch ?? null;
  }

  /** Any message from the cell proves the link alive. */
  heard(cellId: string): void {
    const entry = this.entries.get(cellId);
    if (entry) entry.lastHeardMs = this.now();
  }

  recordHeartbeat(cellId: string, heartbeat: Heartbeat): void {
    const entry = this.entries.get(cellId);
    if (!entry) return;
    entry.lastHeardMs = this.now();
    entry.reportedState = heartbeat.state || "idle";
    entry.reportedEpisodeId = heartbeat.episodeId;
    entry.dutyCyclePct = heartbeat.dutyCyclePct;
    entry.instrumentsDown = (heartbeat.instrumentsDown ?? []).map((i) => ({ kind: i.kind, name: i.name }));
  }

  /**
   * Instrument kinds the cell has and that answer now: its Hello's, less those its latest heartbeat
   * reports down (a kind counts while any instrument of it answers); undefined when not connected here.
   */
  liveInstrumentKinds(cellId: string): string[] | undefined {
    const entry = this.entries.get(cellId);
    return entry ? liveKinds(entry.session.hello.instruments, entry.instrumentsDown) : undefined;
  }

  /** The cell's latest Attention: what it needs from a person now (kind "" clears it). */
  recordAttention(cellId: string, attention: Attention): void {
    const entry = this.entries.get(cellId);
    if (!entry) return;
    entry.lastHeardMs = this.now();
    if (attention.kind !== "reset" && attention.kind !== "label" && attention.kind !== "intervene") {
      entry.attention = undefined;
      this.attentionChanged(cellId, undefined);
      // The person answered: the cell runs its episode again (its next heartbeat will say so too).
      if (entry.reportedState === "awaiting_reset" || entry.reportedState === "awaiting_label" || entry.reportedState === "intervening") entry.reportedState = "busy";
      return;
    }
    let scene: Record<string, unknown> = {};
    try {
      const parsed = JSON.parse(attention.sceneJson || "{}") as unknown;
      if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) scene = parsed as Record<string, unknown>;
    } catch {
      // A cell's malformed scene reads as empty: the station still shows that a reset waits.
    }
    const sinceMs = attention.sinceMs > 0 ? attention.sinceMs : this.now();
    entry.attention = { kind: attention.kind, episodeId: attention.episodeId, since: new Date(sinceMs).toISOString(), scene };
    // Until the next heartbeat: the cell is waiting for a person.
    entry.reportedState = attention.kind === "label" ? "awaiting_label" : attention.kind === "reset" ? "awaiting_reset" : "intervening";
    this.attentionChanged(cellId, entry.attention);
  }

  /**
   * Calls `listener(cellId, attention)` each time a cell connected here says what it needs from a
   * person (undefined: nothing more, or its link closed); returns the function that stops listening.
   */
  onAttentionChange(listener: (cellId: string, attention: CellAttention | undefined) => void): () => void {
    this.attentionListeners.add(listener);
    return () => this.attentionListeners.delete(listener);
  }

  private attentionChanged(cellId: string, attention: CellAttention | undefined): void {
    for (const listener of [...this.attentionListeners]) listener(cellId, attention);
  }

  /** What the cell needs from a person now, or undefined. */
  attentionOf(cellId: string): CellAttention | undefined {
    return this.entries.get(cellId)?.attention;
  }

  recordSafetyEvent(cellId: string, event: SafetyEvent): void {
    const entry = this.entries.get(cellId);
    if (!entry) return;
    // A protective stop ends one episode (e.g. policy_endpoint_timeout) but leaves the cell usable.
    if (event.kind === "estop_triggered") entry.estopped = true;
    if (event.kind === "estop_reset") entry.estopped = false;
  }

  /**
   * The coordinator gave an episode of run `runId` (or took one back: `episodeId` and `runId`
   * undefined). Called before the episode is sent to the cell.
   */
  setAssigned(cellId: string, episodeId: string | undefined, runId?: string): void {
    const entry = this.entries.get(cellId);
    if (!entry) return;
    const ended = entry.assignedEpisodeId;
    const changed = ended !== episodeId;
    entry.assignedEpisodeId = episodeId;
    if (changed) for (const listener of [...this.assignmentListeners]) listener(cellId, { runId: episodeId === undefined ? undefined : runId });
    // Until the next heartbeat says otherwise, a cell that just finished is free for work; but not
    // a cell that declined an offer because it is busy with another episode (it would be offered
    // work again at once, and decline again, until its next heartbeat).
    // The same for a cell whose last heartbeat was about the episode just ended (waiting for its label,
    // say): the fleet view would otherwise show that episode as held, and the state it was in, until the
    // next heartbeat. Safety states are the cell's own and stay as reported.
    const busyElsewhere = entry.reportedEpisodeId !== "" && entry.reportedEpisodeId !== ended;
    if (episodeId === undefined && EPISODE_STATES.has(entry.reportedState) && !busyElsewhere) {
      entry.reportedState = "idle";
      entry.reportedEpisodeId = "";
    }
  }

  /**
   * Calls `listener(cellId, change)` when the coordinator gives a cell an episode or takes it back,
   * synchronously and before the episode is sent to the cell (live views close at once when the cell
   * moves on to another run, then re-check who may watch it); returns the function that stops listening.
   */
  onAssignmentChange(listener: (cellId: string, change: AssignmentChange) => void): () => void {
    this.assignmentListeners.add(listener);
    return () => this.assignmentListeners.delete(listener);
  }

  /**
   * Writes the message on the cell's stream, here or (unless `relay: false`) through the
   * coordinator holding it; false when the cell is connected nowhere.
   */
  async sendToCell(cellId: string, message: CoordinatorMessage, options: { relay?: boolean } = {}): Promise<boolean> {
    const session = this.entries.get(cellId)?.session;
    if (!session) return options.relay !== false && this.relay !== undefined && await this.relay(cellId, message);
    session.send(message);
    return true;
  }

  /**
   * Tells the cell to abandon `episodeId` (CancelEpisode). The assignment stays recorded until the
   * cell reports the episode interrupted or finished. Returns false when the cell is not connected.
   */
  async cancelEpisode(cellId: string, episodeId: string, reason: string): Promise<boolean> {
    return await this.sendToCell(cellId, { cancelEpisode: { episodeId, reason } });
  }

  assignedEpisodeOf(cellId: string): string | undefined {
    return this.entries.get(cellId)?.assignedEpisodeId;
  }

  /** Sessions silent for longer than `timeoutMs`. */
  silentSessions(timeoutMs: number): CellSession[] {
    const now = this.now();
    return [...this.entries.values()].filter((e) => now - e.lastHeardMs > timeoutMs).map((e) => e.session);
  }

  sessions(): CellSession[] {
    return [...this.entries.values()].map((e) => e.session);
  }

  async connectedCells(): Promise<ConnectedCell[]> {
    return this.localCells();
  }

  /** The cells connected to this coordinator, now. */
  localCells(): ConnectedCell[] {
    // Sorted once per change of the fleet, not per call: the scheduler lists the cells on every pass.
    this.ordered ??= [...this.entries.values()].sort((a, b) => a.session.cellId.localeCompare(b.session.cellId));
    return this.ordered
      .map((entry) => {
        const hello = entry.session.hello;
        const episodeId = entry.assignedEpisodeId ?? (entry.reportedEpisodeId || undefined);
        return {
          cellId: hello.cellId,
          model: hello.robotModel,
          firmware: hello.firmware,
          environment: hello.environment,
          instruments: hello.instruments.map((i) => ({ kind: i.kind, name: i.name })),
          instrumentsDown: entry.instrumentsDown.map((i) => ({ ...i })),
          policyImages: [...hello.policyImages],
          state: stateOf(entry),
          dutyCyclePct: entry.dutyCyclePct,
          ...(entry.attention ? { attention: entry.attention } : {}),
          ...(episodeId ? { episodeId } : {}),
          connectedAt: entry.session.connectedAt,
        };
      });
  }
}

/** The state a reader sees: refusals and safety first, then the coordinator's own assignment. */
function stateOf(entry: Entry): string {
  if (entry.firmwareMismatch || entry.reportedState === "firmware_mismatch") return "firmware_mismatch";
  if (entry.estopped || entry.reportedState === "estopped") return "estopped";
  if (entry.reportedState === "held") return "held";
  if (entry.attention?.kind === "label" || entry.reportedState === "awaiting_label") return "awaiting_label";
  if (entry.attention?.kind === "intervene" || entry.reportedState === "intervening") return "intervening";
  if (entry.attention || entry.reportedState === "awaiting_reset") return "awaiting_reset";
  if (entry.assignedEpisodeId) return "busy";
  return entry.reportedState === "busy" ? "busy" : "idle";
}

/** Kinds of `instruments` with at least one instrument not listed in `down` (same kind and name). */
export function liveKinds(instruments: ReadonlyArray<{ kind: string; name: string }>, down: ReadonlyArray<{ kind: string; name: string }>): string[] {
  const isDown = (i: { kind: string; name: string }) => down.some((d) => d.kind === i.kind && d.name === i.name);
  return [...new Set(instruments.filter((i) => !isDown(i)).map((i) => i.kind))].sort();
}
