/**
 * `SerialServoBus`: the MotorBus of a real arm on a serial servo bus (Feetech STS3215 on the SO-101,
 * or Dynamixel X series), over a serialport `SerialPort` or any injected byte stream.
 *
 * NOTE: open it with `SerialServoBus.open(options)`, which pings every servo, checks its model
 * against the calibration and (Dynamixel) arms the bus watchdog. Torque stays off until
 * `setTorque(true)`.
 */
import { SerialPort } from "serialport";
import type { JointState, MotorBus } from "../../hardware/types.js";
import type { Calibration, JointCalibration } from "./calibration.js";
import { goalTicksFromRad, jointDirection, jointRadFromTicks } from "./calibration.js";
import type { ServoCodec, StatusPacket } from "./codec.js";
import { readUint } from "./codec.js";
import { ControlTable, RegisterName, controlTable, decodeRegister, encodeRegister, register } from "./control-tables.js";
import { dynamixelCodec } from "./dynamixel-protocol.js";
import { feetechCodec } from "./feetech-protocol.js";
import { ServoBusOptions, ServoBusOptionsInput, ServoPort, compileServoBusOptions } from "./servo-bus-options.js";
import { ServoBusCounters, ServoBusError, ServoTransport, TransactionSpec } from "./servo-transport.js";

export { ServoBusError } from "./servo-transport.js";
export type { ServoBusCounters } from "./servo-transport.js";

interface Joint {
  name: string;
  calibration: JointCalibration;
  table: ControlTable;
}

export class SerialServoBus implements MotorBus {
  readonly jointNames: readonly string[];
  private readonly joints: Joint[];
  private readonly ids: number[];
  private readonly table: ControlTable;
  private readonly codec: ServoCodec;
  private readonly transport: ServoTransport;
  private readonly calibration: Calibration;
  private torqueOn = false;
  /** Bumped by every setTorque call, so a torque-on sequence notices an e-stop that overtook it. */
  private torqueGeneration = 0;
  private ownedPort: SerialPort | null;

  private constructor(private readonly options: ServoBusOptions, port: ServoPort, ownedPort: SerialPort | null) {
    this.jointNames = options.jointNames;
    this.calibration = options.calibration;
    this.joints = options.jointNames.map((name) => {
      const calibration = options.calibration.joints[name];
      return { name, calibration, table: controlTable(calibration.model) };
    });
    this.ids = this.joints.map((j) => j.calibration.id);
    // Calibration guarantees one protocol per bus; registers used below are common to its models.
    this.table = this.joints[0].table;
    this.codec = this.table.protocol === "feetech" ? feetechCodec : dynamixelCodec;
    this.ownedPort = ownedPort;
    this.transport = new ServoTransport(port, this.codec, {
      baudRate: options.baudRate,
      transactionTimeoutMs: options.transactionTimeoutMs,
      retries: options.retries,
      nowMs: () => Number(options.nowNs() / 1_000_000n),
    });
  }

  /** Opens the port (when given a path), pings every servo, checks models, arms the watchdog. */
  static async open(input: ServoBusOptionsInput): Promise<SerialServoBus> {
    const options = compileServoBusOptions(input);
    let owned: SerialPort | null = null;
    if (options.path !== null) {
      owned = new SerialPort({ path: options.path, baudRate: options.baudRate, autoOpen: false });
      await new Promise<void>((resolve, reject) => owned!.open((error) => (error ? reject(new ServoBusError(`cannot open servo bus ${options.path}: ${error.message}`, [], { cause: error })) : resolve())));
    }
    const bus = new SerialServoBus(options, options.port ?? (owned as unknown as ServoPort), owned);
    try {
      await bus.checkModels();
      await bus.writeEffortLimit();
      await bus.armWatchdog();
    } catch (error) {
      await bus.close();
      throw error;
    }
    return bus;
  }

  /** Counters for metrics (a copy). */
  counters(): ServoBusCounters {
    return { ...this.transport.counters };
  }

  /** Error byte of each joint's latest reply (0 = fine), described. */
  servoStatus(): Record<string, string> {
    return Object.fromEntries(this.joints.map((j) => [j.name, this.codec.describeError(this.transport.lastServoError.get(j.calibration.id) ?? 0)]));
  }

  /** Pings every servo; returns each joint's model number as the servo reports it. */
  async ping(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const joint of this.joints) {
      const id = joint.calibration.id;
      if (this.codec.protocol === "dynamixel") {
        // A Protocol 2.0 PING reply carries model number (2 bytes) and firmware version.
        const replies = await this.transport.run({ label: `ping id ${id}`, ids: [id], build: () => this.codec.encodePing(id), responseParams: 3 });
        out[joint.name] = readUint(replies.get(id)!.params, 0, 2);
      } else {
        await this.transport.run({ label: `ping id ${id}`, ids: [id], build: () => this.codec.encodePing(id), responseParams: 0 });
        const reg = register(joint.table, "modelNumber");
        const replies = await this.transport.run({ label: `read model id ${id}`, ids: [id], build: () => this.codec.encodeRead(id, reg.address, reg.size), responseParams: reg.size });
        out[joint.name] = readUint(replies.get(id)!.params, 0, reg.size);
      }
    }
    return out;
  }

  /** "major.minor" for Feetech (registers 0 and 1); the Firmware Version byte for Dynamixel. Mismatches joined with "/". */
  async readFirmware(): Promise<string> {
    const major = register(this.table, "firmwareMajor");
    const minor = this.table.registers.firmwareMinor;
    const length = minor ? minor.address + minor.size - major.address : major.size;
    const replies = await this.syncRead("read firmware", major.address, length);
    const versions = this.ids.map((id) => {
      const p = replies.get(id)!.params;
      return minor ? `${p[0]}.${p[minor.address - major.address]}` : String(p[0]);
    });
    return [...new Set(versions)].join("/");
  }

  /** Each servo's Homing_Offset register in joint order (Feetech: sign-magnitude, bit 11). */
  async readHomingOffsetTicks(): Promise<number[]> {
    const reg = register(this.table, "homingOffset");
    const replies = await this.syncRead("read homing offsets", reg.address, reg.size);
    return this.joints.map((joint) => decodeRegister(replies.get(joint.calibration.id)!.params, reg.address, register(joint.table, "homingOffset")));
  }

  async readState(): Promise<JointState> {
    const block = this.table.stateBlock;
    const replies = await this.syncRead("sync read state", block.address, block.length);
    const tNs = this.options.nowNs();
    const state: JointState = { tNs, positionRad: [], velocityRadS: [], currentA: [], temperatureC: [] };
    for (const joint of this.joints) {
      const p = replies.get(joint.calibration.id)!.params;
      const value = (name: RegisterName) => decodeRegister(p, block.address, register(joint.table, name));
      const direction = jointDirection(joint.calibration);
      state.positionRad.push(jointRadFromTicks(joint.calibration, joint.table, value("presentPosition")));
      state.velocityRadS.push(direction * value("presentVelocity") * joint.table.velocityUnitRadS);
      state.currentA.push(direction * value("presentCurrent") * joint.table.currentUnitA);
      state.temperatureC.push(value("presentTemperature") * joint.table.temperatureUnitC);
    }
    return state;
  }

  /**
   * Goals in joint order, radians; each is clamped to its calibrated range. While torque is off (after
   * an e-stop) goals are dropped and counted, so a late write cannot move the arm again.
   */
  async writeGoalPositions(positionRad: readonly number[]): Promise<void> {
    if (positionRad.length !== this.joints.length) {
      throw new RangeError(`writeGoalPositions needs ${this.joints.length} positions (${this.jointNames.join(", ")}); got ${positionRad.length}`);
    }
    const generation = this.torqueGeneration;
    if (!this.torqueOn) {
      this.transport.counters.goalWritesSuppressed++;
      return;
    }
    await this.rearmWatchdogIfTripped();
    // A torque off may have overtaken us while the watchdog was checked.
    if (!this.torqueOn || generation !== this.torqueGeneration) {
      this.transport.counters.goalWritesSuppressed++;
      return;
    }
    const reg = register(this.table, "goalPosition");
    const entries = this.joints.map((joint, i) => ({ id: joint.calibration.id, data: encodeRegister(goalTicksFromRad(joint.calibration, joint.table, positionRad[i]), reg) }));
    await this.transport.run({
      label: "sync write goals",
      ids: [],
      build: () => this.codec.encodeSyncWrite(reg.address, reg.size, entries),
      responseParams: 0,
      cancellable: true,
    });
  }

  /**
   * Torque off jumps ahead of every queued read and write (queued goal writes are dropped), is sent as
   * one SYNC_WRITE to all servos and read back; it is re-sent until every servo reports torque off.
   */
  async setTorque(enabled: boolean): Promise<void> {
    const reg = register(this.table, "torqueEnable");
    const generation = ++this.torqueGeneration;
    if (!enabled) {
      this.torqueOn = false;
      this.transport.counters.goalWritesSuppressed += this.transport.cancelQueued();
      let lastError: unknown = null;
      for (let attempt = 0; attempt <= this.options.retries; attempt++) {
        await this.syncWrite("torque off", reg.address, reg.size, () => 0, { priority: true });
        try {
          const replies = await this.syncRead("verify torque off", reg.address, reg.size, true);
          if (this.ids.every((id) => replies.get(id)!.params[0] === 0)) return;
        } catch (error) {
          lastError = error;
        }
      }
      throw new ServoBusError(`torque off could not be confirmed on every servo; cut servo power${lastError ? ` (${(lastError as Error).message})` : ""}`, this.ids);
    }
    // Every step is cancellable and checked: a torque off issued meanwhile must win.
    const step = async (work: Promise<unknown>): Promise<void> => {
      await work;
      if (generation !== this.torqueGeneration) throw new ServoBusError("torque on was interrupted by a torque off (e-stop); torque stays off", this.ids);
    };
    if (this.codec.protocol === "dynamixel" && this.options.watchdogMs > 0) {
      await step(this.syncWrite("clear bus watchdog", register(this.table, "busWatchdog").address, 1, () => 0, { cancellable: true }));
    }
    // Hold where the arm is: goal = present position, so enabling torque does not jump.
    const present = register(this.table, "presentPosition");
    let replies = new Map<number, StatusPacket>();
    await step(this.syncRead("read position before torque on", present.address, present.size).then((r) => (replies = r)));
    const goal = register(this.table, "goalPosition");
    await step(this.syncWrite("hold position", goal.address, goal.size, (id) => decodeRegister(replies.get(id)!.params, present.address, present), { cancellable: true }));
    await step(this.syncWrite("torque on", reg.address, reg.size, () => 1, { cancellable: true }));
    await step(this.armWatchdog());
    this.torqueOn = true;
  }

  async readCalibrationAgeS(): Promise<number> {
    const at = this.calibration.calibratedAt;
    if (!at) throw new ServoBusError("the calibration file has no calibratedAt time");
    return (this.options.wallClockMs() - at.getTime()) / 1000;
  }

  /** Stops listening and closes the port if the bus opened it. Torque is left as it is. */
  async close(): Promise<void> {
    this.transport.detach();
    const port = this.ownedPort;
    this.ownedPort = null;
    if (port?.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
  }

  private async checkModels(): Promise<void> {
    const models = await this.ping();
    const wrong = this.joints.filter((j) => models[j.name] !== j.table.modelNumber);
    if (wrong.length) {
      throw new ServoBusError(
        `servo model mismatch: ${wrong.map((j) => `${j.name} (id ${j.calibration.id}) reports model number ${models[j.name]}, calibration says ${j.table.model} (${j.table.modelNumber})`).join("; ")}`,
        wrong.map((j) => j.calibration.id),
      );
    }
  }

  private watchdogUnits(): number {
    return Math.min(127, Math.ceil(this.options.watchdogMs / (this.table.busWatchdogUnitMs ?? 20)));
  }

  /** The configured effort limit, written to every servo and read back (torque is off on open). */
  private async writeEffortLimit(): Promise<void> {
    const percent = this.options.effortLimitPercent;
    if (percent === null) return;
    const reg = register(this.table, "effortLimit");
    const value = Math.round((percent / 100) * (this.table.effortLimitFullScale ?? 0));
    await this.syncWrite("write effort limit", reg.address, reg.size, () => value);
    const replies = await this.syncRead("read effort limit", reg.address, reg.size);
    const wrong = this.joints.filter((j) => decodeRegister(replies.get(j.calibration.id)!.params, reg.address, reg) !== value);
    if (wrong.length) throw new ServoBusError(`the effort limit ${value} (${percent} %) did not stick on ${wrong.map((j) => `${j.name} (id ${j.calibration.id})`).join(", ")}; a Dynamixel takes it only with torque off`, []);
  }

  private async armWatchdog(): Promise<void> {
    if (this.codec.protocol !== "dynamixel" || this.options.watchdogMs <= 0) return;
    await this.syncWrite("arm bus watchdog", register(this.table, "busWatchdog").address, 1, () => this.watchdogUnits(), { cancellable: true });
  }

  /**
   * After a silence longer than half the watchdog time, a Dynamixel may have stopped (Bus Watchdog
   * = -1, goal registers read-only). The host is evidently talking again, so clear and re-arm.
   */
  private async rearmWatchdogIfTripped(): Promise<void> {
    if (this.codec.protocol !== "dynamixel" || this.options.watchdogMs <= 0) return;
    const nowMs = Number(this.options.nowNs() / 1_000_000n);
    if (nowMs - this.transport.lastRequestMs < this.options.watchdogMs / 2) return;
    const reg = register(this.table, "busWatchdog");
    const replies = await this.syncRead("check bus watchdog", reg.address, 1);
    if (this.ids.some((id) => replies.get(id)!.params[0] === 0xff)) {
      this.transport.counters.watchdogTrips++;
      await this.syncWrite("clear bus watchdog", reg.address, 1, () => 0);
      await this.armWatchdog();
    }
  }

  private syncRead(label: string, address: number, length: number, priority = false): Promise<Map<number, StatusPacket>> {
    const spec: TransactionSpec = { label, ids: this.ids, build: (ids) => this.codec.encodeSyncRead(ids, address, length), responseParams: length, priority };
    return this.transport.run(spec);
  }

  private async syncWrite(label: string, address: number, size: number, value: (id: number) => number, flags: { priority?: boolean; cancellable?: boolean } = {}): Promise<void> {
    const reg = { address, size: size as 1 | 2 | 4 };
    const known = Object.values(this.table.registers).find((r) => r.address === address);
    const entries = this.ids.map((id) => ({ id, data: encodeRegister(value(id), known ?? reg) }));
    await this.transport.run({ label, ids: [], build: () => this.codec.encodeSyncWrite(address, size, entries), responseParams: 0, ...flags });
  }
}
