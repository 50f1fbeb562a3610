/**
 * The motors of a ROS robot (humanoid, quadruped with arm, mobile manipulator) reached through a
 * rosbridge v2 server: joint state from /joint_states, position targets to a position controller's
 * Float64MultiArray topic, torque and firmware through services. The link reconnects by itself; while
 * it is down reads and writes fail with RosBusError("disconnected") so the runner holds and waits.
 */
import type { GripperSensor, JointState, MotorBus, WristForceTorque } from "../../hardware/types.js";
import { compileRosMotorBusOptions, type RosMotorBusOptions } from "./ros-bus-options.js";
import { RosBusError } from "./ros-bus-error.js";
import { RosCamera, type RosCameraOptions } from "./ros-camera.js";
import { RosGripper, RosWristForceTorque } from "./ros-instruments.js";
import { JointCache } from "./ros-joint-cache.js";
import { RosLink, type RosLinkEvent, type RosLinkOptions, type RosLinkState, type RosLinkStats } from "./ros-link.js";
import { float64MultiArray, parseJointState, parseSuccessMessage } from "./ros-messages.js";

/** What the constructor accepts: `url` and `jointNames` are required, the rest default (see RosMotorBusOptions). */
export type RosMotorBusInput = Pick<RosMotorBusOptions, "url" | "jointNames"> &
  Partial<Omit<RosMotorBusOptions, "url" | "jointNames" | "reconnect" | "gripper" | "wristFt">> & {
    reconnect?: Partial<RosMotorBusOptions["reconnect"]>;
    gripper?: (Omit<NonNullable<RosMotorBusOptions["gripper"]>, "holdingEffort"> & { holdingEffort?: number }) | null;
    wristFt?: Partial<NonNullable<RosMotorBusOptions["wristFt"]>> | null;
  };

/** Things a test or the agent's process entry injects. */
export interface RosMotorBusDeps {
  /** Agent clock for JointState.tNs and reading ages (default: process.hrtime). */
  clock?: { nowNs(): bigint };
  /** Wall clock, ms since the epoch, for `maxStampLagMs` (default Date.now). */
  wallClockMs?: () => number;
  /** Random source for backoff jitter (default Math.random). */
  random?: () => number;
  /** Link events: connected, disconnected, backoff, malformed, status. */
  onEvent?: (event: RosLinkEvent) => void;
  /** Loads roslib (default: the package, on first use; RosLinkOptions.loadRoslib). */
  loadRoslib?: RosLinkOptions["loadRoslib"];
}

export interface RosMotorBusStats extends RosLinkStats {
  state: RosLinkState;
  /** readState (or an instrument read) calls refused because readings were too old or missing. */
  staleReads: number;
  /** writeGoalPositions calls refused because the link was down. */
  refusedWrites: number;
}

const monotonic = { nowNs: () => process.hrtime.bigint() };

export class RosMotorBus implements MotorBus {
  readonly jointNames: readonly string[];
  readonly options: RosMotorBusOptions;
  /** Present when `options.gripper` is set. */
  readonly gripper: GripperSensor | null;
  /** Present when `options.wristFt` is set. */
  readonly wristFt: WristForceTorque | null;
  private readonly link: RosLink;
  private readonly cache = new JointCache();
  private readonly clock: { nowNs(): bigint };
  private readonly wallClockMs: () => number;
  private readonly commandIndex: number[];
  private readonly readyWaiters = new Set<() => void>();
  private staleReads = 0;
  private refusedWrites = 0;

  constructor(input: RosMotorBusInput, deps: RosMotorBusDeps = {}) {
    this.options = compileRosMotorBusOptions(input);
    const o = this.options;
    this.jointNames = o.jointNames;
    this.commandIndex = o.commandJointNames.map((name) => o.jointNames.indexOf(name));
    this.clock = deps.clock ?? monotonic;
    this.wallClockMs = deps.wallClockMs ?? Date.now;
    this.link = new RosLink({
      url: o.url,
      connectTimeoutMs: o.connectTimeoutMs,
      reconnect: o.reconnect,
      random: deps.random,
      ...(deps.loadRoslib ? { loadRoslib: deps.loadRoslib } : {}),
      onEvent: (event) => {
        // After an outage, readings from before it must not pass as current.
        if (event.kind === "disconnected") this.cache.clear();
        deps.onEvent?.(event);
      },
    });
    const rate = { throttleRateMs: o.throttleRateMs, queueLength: o.queueLength };
    this.link.subscribe(o.jointStatesTopic, o.jointStatesType, (msg) => this.onJointState(msg), rate);
    this.link.advertise(o.commandTopic, o.commandType);
    const limits = { maxStateAgeMs: o.maxStateAgeMs, maxStampLagMs: o.maxStampLagMs, topic: o.jointStatesTopic };
    const countStale = (): void => void this.staleReads++;
    const context = { link: this.link, clock: this.clock, wallClockMs: this.wallClockMs, countStale };
    this.gripper = o.gripper ? new RosGripper(o.gripper, this.cache, limits, context) : null;
    this.wristFt = o.wristFt ? new RosWristForceTorque(o.wristFt, { ...limits, topic: o.wristFt.topic }, rate, context) : null;
    this.link.start();
  }

  /** Resolves once connected with a reading of every joint; rejects after `timeoutMs`. */
  waitUntilReady(timeoutMs: number): Promise<void> {
    if (this.link.state === "connected" && this.cache.has(this.jointNames)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        this.readyWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(() => {
        this.readyWaiters.delete(done);
        reject(new RosBusError("disconnected", `no complete ${this.options.jointStatesTopic} within ${timeoutMs} ms: ${this.link.describeOutage()}`));
      }, timeoutMs);
      this.readyWaiters.add(done);
    });
  }

  get state(): RosLinkState {
    return this.link.state;
  }

  stats(): RosMotorBusStats {
    return { ...this.link.stats, state: this.link.state, staleReads: this.staleReads, refusedWrites: this.refusedWrites };
  }

  async readFirmware(): Promise<string> {
    const o = this.options;
    const values = await this.link.callService<Record<string, never>, unknown>(o.firmwareService, o.firmwareType, {}, o.serviceTimeoutMs);
    const response = this.checkSuccess(values, o.firmwareService);
    if (response.message.trim() === "") throw new RosBusError("service_failed", `${o.firmwareService} answered success with an empty message; it must put the firmware version in "message"`);
    return response.message.trim();
  }

  async readState(): Promise<JointState> {
    if (this.link.state !== "connected") throw new RosBusError(this.link.state === "closed" ? "closed" : "disconnected", `cannot read joint state: ${this.link.describeOutage()}`);
    const o = this.options;
    let readings;
    try {
      readings = this.cache.fresh(this.jointNames, this.clock.nowNs(), this.wallClockMs(), { maxStateAgeMs: o.maxStateAgeMs, maxStampLagMs: o.maxStampLagMs, topic: o.jointStatesTopic });
    } catch (error) {
      this.staleReads++;
      throw error;
    }
    const oldestNs = readings.reduce((min, r) => (r.receivedNs < min ? r.receivedNs : min), readings[0].receivedNs);
    return {
      tNs: oldestNs,
      positionRad: readings.map((r) => r.positionRad),
      velocityRadS: readings.map((r) => r.velocityRadS),
      currentA: readings.map((r) => (o.effortIsCurrentA ? r.effort : NaN)),
      temperatureC: readings.map(() => NaN),
    };
  }

  async writeGoalPositions(positionRad: readonly number[]): Promise<void> {
    if (positionRad.length !== this.jointNames.length) {
      throw new RosBusError("invalid_argument", `writeGoalPositions needs ${this.jointNames.length} targets (${this.jointNames.join(", ")}); got ${positionRad.length}`);
    }
    const bad = positionRad.findIndex((p) => typeof p !== "number" || !Number.isFinite(p));
    if (bad >= 0) throw new RosBusError("invalid_argument", `target for ${this.jointNames[bad]} must be a finite number of radians; got ${positionRad[bad]}`);
    try {
      this.link.publish(this.options.commandTopic, float64MultiArray(this.commandIndex.map((i) => positionRad[i])));
    } catch (error) {
      this.refusedWrites++;
      throw error;
    }
  }

  async setTorque(enabled: boolean): Promise<void> {
    const o = this.options;
    const values = await this.link.callService<{ data: boolean }, unknown>(o.setTorqueService, o.setTorqueType, { data: enabled }, o.serviceTimeoutMs);
    this.checkSuccess(values, o.setTorqueService);
  }

  /** Closes the connection and stops reconnecting. */
  /** A camera on one of the robot's image topics, over this bus's rosbridge link (subscribed on every connection). */
  openCamera(options: RosCameraOptions): RosCamera {
    return new RosCamera(options, this.link, this.clock);
  }

  async close(): Promise<void> {
    this.link.close();
  }

  private checkSuccess(values: unknown, service: string): { success: boolean; message: string } {
    const parsed = parseSuccessMessage(values, service);
    if (!parsed.ok) {
      this.link.malformed(parsed.reason);
      throw new RosBusError("service_failed", parsed.reason);
    }
    if (!parsed.value.success) throw new RosBusError("service_failed", `${service} refused: ${parsed.value.message || "(no message)"}`);
    return parsed.value;
  }

  private onJointState(msg: unknown): void {
    const parsed = parseJointState(msg);
    if (!parsed.ok) {
      this.link.malformed(`${this.options.jointStatesTopic}: ${parsed.reason}`);
      return;
    }
    this.cache.update(parsed.value, this.clock.nowNs());
    if (this.cache.has(this.jointNames)) {
      this.link.markHealthy();
      for (const waiter of [...this.readyWaiters]) waiter();
    }
  }
}
