/**
 * A serial servo bus full of emulated servos that answer byte for byte like real ones, in either
 * protocol (Feetech STS/SCS or Dynamixel 2.0): the control tables of emulated-models.ts, a motion model,
 * torque enable, the Dynamixel bus watchdog, and fault injection on replies. Its wire code is its own
 * (feetech-wire.ts, dynamixel-wire.ts): it imports nothing of the driver it is tested against.
 *
 * Duplex interface: `write(requestBytes)` is the host talking; replies go to `onData` listeners
 * synchronously, one chunk per request. Time comes from the injected `nowMs` clock only.
 */
import { DynamixelWire } from "./dynamixel-wire.js";
import {
  emulatedModel,
  emulatedRegister,
  readRegister,
  writeRegister,
  type EmulatedModel,
  type EmulatedProtocol,
  type EmulatedRegisterName,
  type EmulatedServoModel,
} from "./emulated-models.js";
import { WIRE_BROADCAST_ID, type EmulatorWire, type WireRequest } from "./emulator-wire.js";
import { FeetechWire } from "./feetech-wire.js";
import { FaultInjector, FaultOptions } from "./fault-injector.js";
import { MotionModel, type MotionLimits } from "./motion-model.js";

export interface EmulatedServoSpec {
  id: number;
  model: EmulatedServoModel;
  /** Feetech "major.minor" (e.g. "3.11"); Dynamixel the firmware byte (e.g. "46"). Default from the options. */
  firmware?: string;
  /** Present position at power-on, raw ticks (default 2048). */
  initialTicks?: number;
}

export interface ServoEmulatorOptions {
  servos: EmulatedServoSpec[];
  /** Firmware of servos that do not set their own (default "3.11" Feetech, "46" Dynamixel). */
  firmware?: string;
  /** The emulator's clock, ms. Required: tests step it by hand, live bridges pass performance.now. */
  nowMs: () => number;
  ambientC?: number;
  faults?: FaultOptions;
  /**
   * Where each servo's motion comes from (default: a `MotionModel` per servo). A simulated cell passes
   * a backend over its SimWorld so that the world stays the single physics (world-servo-bridge.ts).
   */
  motion?: (spec: EmulatedServoSpec, table: EmulatedModel, initialTicks: number, ambientC: number) => ServoMotion;
}

/** What the emulator needs of one servo's physics; `MotionModel` is the stand-alone one. */
export interface ServoMotion {
  readonly positionTicks: number;
  readonly velocityTicksS: number;
  readonly currentA: number;
  readonly temperatureC: number;
  goalTicks: number;
  torqueOn: boolean;
  /** Advances by `dtS` seconds of the emulator's clock. */
  advance(dtS: number, limits: MotionLimits): void;
  /** Stops where it is (bus watchdog): goal becomes the present position. */
  stop(): void;
}

/** Error numbers of a Dynamixel Protocol 2.0 status packet (e-manual §2.2, Error). */
const DxlError = { instructionError: 2, dataRangeError: 4, accessError: 7 } as const;

const MEMORY_BYTES = 1024;
/** Dynamixel X: goal registers that become read-only after a bus watchdog error (Goal PWM .. Goal Position). */
const DXL_GOAL_SPAN = { from: 100, to: 120 };
/** Dynamixel X: EEPROM area, writable only with torque off. */
const DXL_EEPROM_END = 64;

export class EmulatedServo {
  readonly memory = new Uint8Array(MEMORY_BYTES);
  readonly motion: ServoMotion;
  /** Last time an instruction packet addressed this servo, ms. */
  lastContactMs: number;

  constructor(readonly id: number, readonly table: EmulatedModel, firmware: string, initialTicks: number, ambientC: number, nowMs: number, motion?: ServoMotion) {
    this.motion = motion ?? new MotionModel(initialTicks, ambientC);
    this.lastContactMs = nowMs;
    this.set("modelNumber", table.modelNumber);
    const [major, minor] = firmware.split(".").map(Number);
    this.set("firmwareMajor", major);
    if (table.registers.firmwareMinor) this.set("firmwareMinor", minor ?? 0);
    this.set("id", id);
    this.set("minPositionLimit", 0);
    this.set("maxPositionLimit", table.ticksPerRev - 1);
    this.set("goalPosition", initialTicks);
    this.publish();
  }

  get(name: EmulatedRegisterName): number {
    return readRegister(this.memory, emulatedRegister(this.table, name));
  }

  set(name: EmulatedRegisterName, value: number): void {
    writeRegister(this.memory, emulatedRegister(this.table, name), value);
  }

  /** Copies the motion state into the present-value registers. */
  publish(): void {
    const m = this.motion;
    this.set("presentPosition", Math.round(m.positionTicks));
    this.set("presentVelocity", Math.round(m.velocityTicksS * (2 * Math.PI / this.table.ticksPerRev) / this.table.velocityUnitRadS));
    this.set("presentCurrent", Math.round(m.currentA / this.table.currentUnitA));
    this.set("presentTemperature", Math.round(m.temperatureC));
    this.set("torqueEnable", m.torqueOn ? 1 : 0);
  }

  watchdogTripped(): boolean {
    return this.table.protocol === "dynamixel" && this.memory[emulatedRegister(this.table, "busWatchdog").address] === 0xff;
  }
}

export class ServoBusEmulator {
  readonly protocol: EmulatedProtocol;
  readonly faults: FaultInjector;
  private readonly wire: EmulatorWire;
  private readonly servos = new Map<number, EmulatedServo>();
  private readonly listeners = new Set<(bytes: Uint8Array) => void>();
  private lastUpdateMs: number;
  /** Requests received and replies sent, for tests. */
  readonly stats = { requests: 0, replies: 0, badRequests: 0 };

  constructor(private readonly options: ServoEmulatorOptions) {
    if (options.servos.length === 0) throw new RangeError("servo emulator needs at least one servo");
    const protocols = new Set(options.servos.map((s) => emulatedModel(s.model).protocol));
    if (protocols.size !== 1) throw new RangeError("servo emulator: all servos on one bus must speak the same protocol");
    this.protocol = [...protocols][0];
    this.wire = this.protocol === "feetech" ? new FeetechWire() : new DynamixelWire();
    this.faults = new FaultInjector(options.faults);
    this.lastUpdateMs = options.nowMs();
    const defaultFirmware = options.firmware ?? (this.protocol === "feetech" ? "3.11" : "46");
    for (const spec of options.servos) {
      if (this.servos.has(spec.id)) throw new RangeError(`servo emulator: duplicate id ${spec.id}`);
      const table = emulatedModel(spec.model);
      const initialTicks = spec.initialTicks ?? 2048;
      const ambientC = options.ambientC ?? 25;
      const motion = options.motion?.(spec, table, initialTicks, ambientC);
      this.servos.set(spec.id, new EmulatedServo(spec.id, table, spec.firmware ?? defaultFirmware, initialTicks, ambientC, this.lastUpdateMs, motion));
    }
  }

  servo(id: number): EmulatedServo {
    const servo = this.servos.get(id);
    if (!servo) throw new RangeError(`servo emulator has no servo with id ${id}`);
    this.update();
    return servo;
  }

  onData(listener: (bytes: Uint8Array) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Bytes from the host. Replies (if any) are emitted before this returns. */
  write(bytes: Uint8Array): void {
    const replies: Uint8Array[] = [];
    // A real servo ignores what it cannot parse.
    const { requests, damaged } = this.wire.read(bytes);
    this.stats.badRequests += damaged;
    for (const instruction of requests) {
      this.stats.requests++;
      this.update();
      replies.push(...this.execute(instruction));
    }
    const out: Uint8Array[] = [];
    for (const reply of replies) {
      this.stats.replies++;
      const bytesOut = this.faults.apply(reply);
      if (bytesOut.length) out.push(bytesOut);
    }
    if (out.length === 0) return;
    const chunk = Buffer.concat(out);
    for (const listener of this.listeners) listener(new Uint8Array(chunk));
  }

  /** Advances every servo's motion to the clock's now (also done on every request). */
  update(): void {
    const now = this.options.nowMs();
    const from = this.lastUpdateMs;
    if (now <= from) return;
    this.lastUpdateMs = now;
    for (const servo of this.servos.values()) {
      let t = from;
      const deadline = this.watchdogDeadline(servo);
      if (deadline !== null && deadline < now) {
        this.advance(servo, Math.max(0, deadline - t));
        t = Math.max(t, deadline);
        // Bus watchdog expired: the servo stops and flags -1 until the host writes 0.
        servo.motion.stop();
        servo.set("goalPosition", servo.motion.goalTicks);
        servo.memory[emulatedRegister(servo.table, "busWatchdog").address] = 0xff;
      }
      this.advance(servo, now - t);
    }
  }

  private watchdogDeadline(servo: EmulatedServo): number | null {
    if (servo.table.protocol !== "dynamixel" || !servo.motion.torqueOn) return null;
    const units = servo.memory[emulatedRegister(servo.table, "busWatchdog").address];
    if (units === 0 || units > 127) return null;
    return servo.lastContactMs + units * (servo.table.busWatchdogUnitMs ?? 20);
  }

  private advance(servo: EmulatedServo, dtMs: number): void {
    if (dtMs > 0) {
      const table = servo.table;
      const ticksPerRad = table.ticksPerRev / (2 * Math.PI);
      servo.motion.advance(dtMs / 1000, {
        maxSpeed: table.nominal.maxSpeedRadS * ticksPerRad,
        maxAccel: table.nominal.maxAccelRadS2 * ticksPerRad,
        ticksPerRad,
        stallCurrentA: table.nominal.stallCurrentA,
      });
    }
    servo.publish();
  }

  private status(servo: EmulatedServo, error: number, params: Uint8Array | readonly number[] = []): Uint8Array {
    return this.wire.status(servo.id, error, params);
  }

  private contact(servo: EmulatedServo): void {
    servo.lastContactMs = this.options.nowMs();
  }

  private execute(instruction: WireRequest): Uint8Array[] {
    switch (instruction.kind) {
      case "ping": {
        const targets = instruction.id === WIRE_BROADCAST_ID ? [...this.servos.values()] : [this.servos.get(instruction.id)].filter((s) => s !== undefined);
        return targets.map((servo) => {
          this.contact(servo);
          // Protocol 2.0 PING status: model number (2 bytes, little-endian) and firmware version (§3.1).
          const params = this.protocol === "dynamixel" ? [servo.get("modelNumber") & 0xff, servo.get("modelNumber") >> 8, servo.get("firmwareMajor")] : [];
          return this.status(servo, 0, params);
        });
      }
      case "read": {
        const servo = this.servos.get(instruction.id);
        if (!servo) return [];
        this.contact(servo);
        if (instruction.address + instruction.length > MEMORY_BYTES) return [this.status(servo, this.rangeError(), [])];
        return [this.status(servo, 0, servo.memory.slice(instruction.address, instruction.address + instruction.length))];
      }
      case "write": {
        const targets = instruction.id === WIRE_BROADCAST_ID ? [...this.servos.values()] : [this.servos.get(instruction.id)].filter((s) => s !== undefined);
        const replies: Uint8Array[] = [];
        for (const servo of targets) {
          this.contact(servo);
          const error = this.writeMemory(servo, instruction.address, instruction.data);
          if (instruction.id !== WIRE_BROADCAST_ID) replies.push(this.status(servo, error));
        }
        return replies;
      }
      case "syncRead": {
        const replies: Uint8Array[] = [];
        for (const id of instruction.ids) {
          const servo = this.servos.get(id);
          if (!servo) continue;
          this.contact(servo);
          replies.push(this.status(servo, 0, servo.memory.slice(instruction.address, instruction.address + instruction.length)));
        }
        return replies;
      }
      case "syncWrite": {
        for (const entry of instruction.entries) {
          const servo = this.servos.get(entry.id);
          if (!servo) continue;
          this.contact(servo);
          this.writeMemory(servo, instruction.address, entry.data);
        }
        return [];
      }
      case "other": {
        const servo = this.servos.get(instruction.id);
        // Dynamixel answers an unknown instruction with Instruction Error; Feetech stays silent.
        return servo && this.protocol === "dynamixel" ? [this.status(servo, DxlError.instructionError)] : [];
      }
    }
  }

  private rangeError(): number {
    return this.protocol === "dynamixel" ? DxlError.dataRangeError : 0;
  }

  /** Applies a write as the servo would; returns the status error byte. */
  private writeMemory(servo: EmulatedServo, address: number, data: Uint8Array): number {
    const end = address + data.length;
    if (end > MEMORY_BYTES) return this.rangeError();
    if (this.protocol === "dynamixel") {
      if (address < DXL_EEPROM_END && servo.motion.torqueOn) return DxlError.accessError;
      if (servo.watchdogTripped() && address < DXL_GOAL_SPAN.to && end > DXL_GOAL_SPAN.from) return DxlError.dataRangeError;
    }
    const torque = emulatedRegister(servo.table, "torqueEnable");
    const wasOn = servo.motion.torqueOn;
    servo.memory.set(data, address);
    const nowOn = servo.memory[torque.address] !== 0;
    if (nowOn && !wasOn) {
      // Torque on holds the present position until a new goal arrives.
      servo.motion.goalTicks = Math.round(servo.motion.positionTicks);
      const goal = emulatedRegister(servo.table, "goalPosition");
      if (!(address <= goal.address && end >= goal.address + goal.size)) servo.set("goalPosition", servo.motion.goalTicks);
    }
    servo.motion.torqueOn = nowOn;
    const goal = emulatedRegister(servo.table, "goalPosition");
    if (address < goal.address + goal.size && end > goal.address) {
      const min = servo.get("minPositionLimit");
      const max = servo.get("maxPositionLimit");
      servo.motion.goalTicks = Math.min(max, Math.max(min, servo.get("goalPosition")));
    }
    servo.publish();
    return 0;
  }
}
