/**
 * The e-stop path. A dedicated watcher subscribed to `EstopInput.onTrigger` (event-driven: the
 * control loop never polls it) turns torque off on every actuator at once, measures trigger to
 * torque-off with `process.hrtime.bigint()`, and latches. While latched the guarded motor bus
 * refuses torque on and goal writes, so nothing the agent does can move the arm; only an explicit
 * technician reset, with the input released, clears the latch. The latch survives an agent restart
 * through a marker file.
 *
 * The marker is written and removed off the event loop (libuv's thread pool), in the order of the
 * trips and resets: a synchronous write on the trigger held the loop, and with it the bus's torque-off
 * confirmation, for as long as the kernel made the write wait. On a machine busy writing (dirty pages
 * being flushed) that is tens of milliseconds or more, which is the e-stop's whole latency budget.
 */
import { existsSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import type { EstopInput, MotorBus } from "../hardware/types.js";

/** armed: motion allowed; latched: torque off, no motion until a technician resets. */
export type EstopLatchState = "armed" | "latched";
export type EstopLatchEvent = "trigger" | "reset";

/** A reset the rules refuse; the message says what to do. */
export class EstopResetRefused extends Error {}

/**
 * The latch's only legal moves. A trigger always latches; a reset is legal only from `latched` and
 * only with the input released.
 */
export function nextLatchState(state: EstopLatchState, event: EstopLatchEvent, inputPressed: boolean): EstopLatchState {
  if (event === "trigger") return "latched";
  if (state !== "latched") throw new EstopResetRefused("the cell is not e-stopped; there is nothing to reset");
  if (inputPressed) throw new EstopResetRefused("the e-stop input is still pressed; release (twist out) the button, check the cell, then reset");
  return "armed";
}

/** The outcome of one trigger's torque off. */
export interface TorqueOffOutcome {
  /** Trigger to torque-off confirmed by the bus, ms (to the failure when `error` is set). */
  latencyMs: number;
  /** Set when the bus could not confirm torque off: cut power by hand. */
  error?: string;
}

export interface EstopTrip {
  /** Wall clock of the trigger, ms since the epoch. */
  atMs: number;
  /** Resolves after `onTorqueOff` has run, so whoever awaits it sees the SafetyEvent already queued. */
  torqueOff: Promise<TorqueOffOutcome>;
}

export interface EstopWatchOptions {
  input: EstopInput;
  /** The raw bus: torque off must not go through the guard. */
  motors: MotorBus;
  /** Runs synchronously right after torque off was issued (abort the episode, move the agent state). */
  onTrip(trip: EstopTrip): void;
  /** Runs once the bus confirmed torque off or gave up (send the SafetyEvent, count, log). */
  onTorqueOff(outcome: TorqueOffOutcome, trip: EstopTrip): void;
  /** Marker file that keeps the latch across agent restarts (default: none). */
  latchFile?: string;
  /** Latency clock, ns (default process.hrtime.bigint). */
  nowNs?: () => bigint;
}

export class EstopWatch {
  private latch: EstopLatchState;
  private last: EstopTrip | undefined;
  private readonly unsubscribe: () => void;
  private readonly nowNs: () => bigint;
  /** The marker file's pending writes and removals, in order. */
  private persistence: Promise<void> = Promise.resolve();

  constructor(private readonly options: EstopWatchOptions) {
    this.nowNs = options.nowNs ?? (() => process.hrtime.bigint());
    const persisted = options.latchFile !== undefined && existsSync(options.latchFile);
    this.latch = persisted || options.input.isPressed() ? "latched" : "armed";
    this.unsubscribe = options.input.onTrigger(() => this.trip());
  }

  state(): EstopLatchState {
    return this.latch;
  }

  get latched(): boolean {
    return this.latch === "latched";
  }

  /** The latest trigger, if any since the agent started. */
  lastTrip(): EstopTrip | undefined {
    return this.last;
  }

  /** Technician reset; throws `EstopResetRefused` while the input is pressed or nothing is latched. */
  reset(): void {
    this.latch = nextLatchState(this.latch, "reset", this.options.input.isPressed());
    const { latchFile } = this.options;
    if (latchFile) this.persist(() => rm(latchFile, { force: true }));
  }

  /**
   * Resolves once the marker file says what the latch says (written after a trip, removed after a
   * reset). A write that fails leaves the in-memory latch standing; only a restart would forget it.
   */
  persisted(): Promise<void> {
    return this.persistence;
  }

  private persist(change: () => Promise<void>): void {
    this.persistence = this.persistence.then(change).catch(() => undefined);
  }

  /**
   * A MotorBus that refuses torque on and goal writes while latched; reads and torque off pass.
   * The runner drives the motors only through this.
   */
  guard(motors: MotorBus): MotorBus {
    const refuse = (what: string) => Promise.reject(new Error(`${what} refused: the cell is e-stopped; a technician must reset it first`));
    const guarded: MotorBus = {
      jointNames: motors.jointNames,
      readFirmware: () => motors.readFirmware(),
      readState: () => motors.readState(),
      writeGoalPositions: (positionRad) => (this.latched ? refuse("goal write") : motors.writeGoalPositions(positionRad)),
      setTorque: (enabled) => (enabled && this.latched ? refuse("torque on") : motors.setTorque(enabled)),
    };
    if (motors.readCalibrationAgeS) guarded.readCalibrationAgeS = () => motors.readCalibrationAgeS!();
    if (motors.readCycleCounts) guarded.readCycleCounts = () => motors.readCycleCounts!();
    return guarded;
  }

  close(): void {
    this.unsubscribe();
  }

  private trip(): void {
    // Torque off first: everything else can wait a few microseconds.
    const startedNs = this.nowNs();
    let issued: Promise<void>;
    try {
      issued = this.options.motors.setTorque(false);
    } catch (error) {
      issued = Promise.reject(error);
    }
    this.latch = nextLatchState(this.latch, "trigger", true);
    const elapsedMs = () => Number(this.nowNs() - startedNs) / 1e6;
    const trip: EstopTrip = { atMs: Date.now(), torqueOff: undefined as unknown as Promise<TorqueOffOutcome> };
    trip.torqueOff = issued
      .then((): TorqueOffOutcome => ({ latencyMs: elapsedMs() }), (error: Error): TorqueOffOutcome => ({ latencyMs: elapsedMs(), error: error.message }))
      .then((outcome) => {
        try {
          this.options.onTorqueOff(outcome, trip);
        } catch {
          // Reporting failed (e.g. the agent is shutting down); the latch and torque off stand.
        }
        return outcome;
      });
    this.last = trip;
    const { latchFile } = this.options;
    if (latchFile) this.persist(() => writeFile(latchFile, JSON.stringify({ at_ms: trip.atMs })));
    this.options.onTrip(trip);
  }
}
