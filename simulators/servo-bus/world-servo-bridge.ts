/**
 * Puts a SimWorld's arm behind an emulated serial servo bus, so a simulated cell's agent drives it
 * with the real `SerialServoBus` over serialport's API, byte for byte as on a real arm:
 *
 *   SerialServoBus --bytes--> SerialPortMock --bytes--> ServoBusEmulator --> WorldJointMotion --> SimWorld
 *
 * The world stays the single physics: each emulated servo's motion is a view of one world joint (goal
 * writes set the world's joint goal; present position, velocity, current and temperature read the
 * world's measured joints; torque enable maps to world.setTorque). The emulator's clock is world time,
 * so the Dynamixel bus watchdog counts simulated milliseconds.
 *
 * Like the in-process SimMotorBus, the e-stop cuts motor power in hardware: while it is pressed the
 * world's joints are limp whatever the servos' torque registers say.
 *
 * The FR3 has no serial servo bus; its simulated cell uses Dynamixel X-series servos (XM430-W350) as a
 * stand-in so that the fixed-arm class is exercised over a wire protocol too. A Dynamixel reports one
 * firmware byte, so the stand-in's bus is wrapped to report the pinned Franka release (see
 * `FirmwareLabelledBus`).
 */
import type { JointState, MotorBus } from "../../cell-agent/hardware/types.js";
import type { Calibration } from "../../cell-agent/devices/servo/calibration.js";
import type { ServoModel } from "../../cell-agent/devices/servo/control-tables.js";
import { controlTable } from "../../cell-agent/devices/servo/control-tables.js";
import { SerialServoBus } from "../../cell-agent/devices/servo/servo-bus.js";
import type { SimEstopInput } from "../devices/sim-estop-input.js";
import type { SimWorld } from "../world/sim-world.js";
import { createMockServoPort, type MockServoPort } from "./mock-port.js";
import type { ServoMotion } from "./servo-emulator.js";

/** Servo model each wire-simulated robot model uses. */
export const SERVO_MODEL_OF: Readonly<Record<string, ServoModel>> = { so101: "sts3215", fr3: "xm430-w350" };

/** The wall-clock instant simulated time 0 stands for, ms since the epoch (calibration age is sim time). */
export const SIM_EPOCH_MS = Date.parse("2026-01-01T00:00:00Z");

/** Raw ticks at which every simulated joint reads 0 rad. */
const HOME_TICKS = 2048;
/** Largest magnitude every present-value register of both protocols can hold. */
const REGISTER_LIMIT = 32767;

function saturate(value: number): number {
  return Math.max(-REGISTER_LIMIT, Math.min(REGISTER_LIMIT, value));
}

export interface WorldServoBusOptions {
  world: SimWorld;
  estop: SimEstopInput;
  /** The cell's firmware pin, e.g. "3.11" (Feetech major.minor) or "5.7.2" (FR3 stand-in: major in the Dynamixel byte). */
  firmware: string;
  /** Servo model (default from SERVO_MODEL_OF by the world's robot model). */
  servoModel?: ServoModel;
  /** SerialServoBus Dynamixel bus watchdog, simulated ms (default 100, the driver's default; 0 disables). */
  watchdogMs?: number;
}

export interface WorldServoBus {
  /** What the agent gets: the SerialServoBus (or, for the FR3 stand-in, it with the Franka firmware label). */
  motors: MotorBus;
  /** The real driver. */
  serial: SerialServoBus;
  mock: MockServoPort;
  close(): Promise<void>;
}

/** The calibration a simulated arm is built with: ids 1..n in joint order, 0 rad at 2048 ticks, full turn range. */
export function simulatedCalibration(jointNames: readonly string[], model: ServoModel): Calibration {
  const ticksPerRev = controlTable(model).ticksPerRev;
  return {
    calibratedAt: new Date(SIM_EPOCH_MS),
    joints: Object.fromEntries(
      jointNames.map((name, i) => [name, { id: i + 1, model, homingOffsetTicks: HOME_TICKS, rangeMinTicks: 0, rangeMaxTicks: ticksPerRev - 1, driveMode: 0 as const }]),
    ),
  };
}

/** The world side shared by every servo on the bus: per-servo torque wishes, the e-stop, one sample per instant. */
export class WorldServoLink {
  private readonly torqueWanted: boolean[];
  private cached: JointState | null = null;
  private cachedTruth: number[] = [];

  constructor(readonly world: SimWorld, private readonly estop: SimEstopInput) {
    this.torqueWanted = world.embodiment.jointNames.map(() => world.servos.torqueEnabled);
    estop.onTrigger(() => this.apply());
  }

  /**
   * The world's measured joints, drawn once per world instant (and again if a reset moved the arm), so
   * the sensor noise stream advances the same way however many registers a transaction reads.
   */
  sample(): JointState {
    this.apply();
    const truth = this.world.servos.positionRad;
    const fresh = this.cached !== null && this.cached.tNs === this.world.tNs && truth.every((p, i) => p === this.cachedTruth[i]);
    if (!fresh) {
      this.cached = this.world.measuredJoints();
      this.cachedTruth = [...truth];
    }
    return this.cached!;
  }

  goalRad(joint: number): number {
    return this.world.servos.goalRad[joint];
  }

  setGoalRad(joint: number, positionRad: number): void {
    const goals = [...this.world.servos.goalRad];
    goals[joint] = positionRad;
    this.world.setGoals(goals);
  }

  torque(joint: number): boolean {
    return this.torqueWanted[joint];
  }

  setTorque(joint: number, on: boolean): void {
    this.torqueWanted[joint] = on;
    this.apply();
  }

  /** World torque is on only when every servo has torque enabled and the e-stop is released. */
  apply(): void {
    this.world.setTorque(this.torqueWanted.every(Boolean) && !this.estop.isPressed());
  }
}

/** One emulated servo's motion, read from and written to one world joint. The world integrates; `advance` does nothing. */
export class WorldJointMotion implements ServoMotion {
  private readonly ticksPerRad: number;

  constructor(private readonly link: WorldServoLink, private readonly joint: number, ticksPerRev: number) {
    this.ticksPerRad = ticksPerRev / (2 * Math.PI);
  }

  // Registers saturate like a real servo's (a 15-bit magnitude on Feetech) rather than overflow.
  get positionTicks(): number {
    return saturate(HOME_TICKS + this.link.sample().positionRad[this.joint] * this.ticksPerRad);
  }

  get velocityTicksS(): number {
    return saturate(this.link.sample().velocityRadS[this.joint] * this.ticksPerRad);
  }

  get currentA(): number {
    return this.link.sample().currentA[this.joint];
  }

  get temperatureC(): number {
    return this.link.sample().temperatureC[this.joint];
  }

  get goalTicks(): number {
    return HOME_TICKS + this.link.goalRad(this.joint) * this.ticksPerRad;
  }

  set goalTicks(ticks: number) {
    this.link.setGoalRad(this.joint, (ticks - HOME_TICKS) / this.ticksPerRad);
  }

  get torqueOn(): boolean {
    return this.link.torque(this.joint);
  }

  set torqueOn(on: boolean) {
    this.link.setTorque(this.joint, on);
  }

  advance(): void {}

  stop(): void {
    this.link.setGoalRad(this.joint, this.link.sample().positionRad[this.joint]);
  }
}

/**
 * A MotorBus that reports a firmware label in place of the bus's firmware byte when the byte is the
 * label's major version (the FR3 stand-in); a different byte is reported as it is, so a mismatch shows.
 */
export class FirmwareLabelledBus implements MotorBus {
  readonly jointNames: readonly string[];

  constructor(private readonly bus: SerialServoBus, private readonly label: string) {
    this.jointNames = bus.jointNames;
  }

  async readFirmware(): Promise<string> {
    const reported = await this.bus.readFirmware();
    return reported === this.label.split(".")[0] ? this.label : reported;
  }

  readState(): Promise<JointState> {
    return this.bus.readState();
  }

  writeGoalPositions(positionRad: readonly number[]): Promise<void> {
    return this.bus.writeGoalPositions(positionRad);
  }

  setTorque(enabled: boolean): Promise<void> {
    return this.bus.setTorque(enabled);
  }

  readCalibrationAgeS(): Promise<number> {
    return this.bus.readCalibrationAgeS();
  }
}

/**
 * Builds the emulated bus over the world and opens the real SerialServoBus on it (pings every servo,
 * checks models, arms the Dynamixel watchdog). Torque is left as the world has it (on), like the
 * in-process bus, so goals move the arm without a setTorque(true) first.
 */
export async function openWorldServoBus(options: WorldServoBusOptions): Promise<WorldServoBus> {
  const { world, estop, firmware } = options;
  const modelId = world.embodiment.model;
  const servoModel = options.servoModel ?? SERVO_MODEL_OF[modelId];
  if (!servoModel) throw new Error(`robot model "${modelId}" has no simulated servo bus; models with one: ${Object.keys(SERVO_MODEL_OF).join(", ")}`);
  const table = controlTable(servoModel);
  const link = new WorldServoLink(world, estop);
  const jointNames = world.embodiment.jointNames;
  const positions = world.servos.positionRad;
  // Feetech carries "major.minor" in two registers; a Dynamixel only the major byte.
  const firmwareRegisters = table.protocol === "feetech" ? firmware : firmware.split(".")[0];
  const mock = await createMockServoPort({
    servos: jointNames.map((_, i) => ({ id: i + 1, model: servoModel, initialTicks: Math.round(HOME_TICKS + positions[i] * table.ticksPerRev / (2 * Math.PI)) })),
    firmware: firmwareRegisters,
    nowMs: () => Number(world.tNs) / 1e6,
    motion: (spec) => new WorldJointMotion(link, spec.id - 1, table.ticksPerRev),
  });
  // The e-stop has no release event: power comes back to the servos when the bus is next used.
  const emulator = mock.emulator;
  const write = emulator.write.bind(emulator);
  emulator.write = (bytes: Uint8Array): void => {
    link.apply();
    write(bytes);
  };
  let serial: SerialServoBus;
  try {
    serial = await SerialServoBus.open({
      jointNames,
      calibration: simulatedCalibration(jointNames, servoModel),
      port: mock.port,
      nowNs: () => world.tNs,
      wallClockMs: () => SIM_EPOCH_MS + Number(world.tNs) / 1e6,
      ...(options.watchdogMs === undefined ? {} : { watchdogMs: options.watchdogMs }),
    });
    if (world.servos.torqueEnabled) await serial.setTorque(true);
  } catch (error) {
    await mock.close();
    throw error;
  }
  const motors = table.protocol === "feetech" ? serial : new FirmwareLabelledBus(serial, firmware);
  return {
    motors,
    serial,
    mock,
    async close() {
      await serial.close();
      await mock.close();
    },
  };
}
