/**
 * The cell agent's view of its hardware: small interfaces that a real driver (serial servo bus,
 * rosbridge, NatNet, a USB camera) and a simulator implement alike. The agent never knows which.
 *
 * Units are in the names: radians, seconds, nanoseconds, metres, newtons.
 */

/** One reading of every joint on the robot, in the robot's joint order. */
export interface JointState {
  /** Monotonic time of the reading, ns, on the agent's clock. */
  tNs: bigint;
  positionRad: number[];
  velocityRadS: number[];
  currentA: number[];
  temperatureC: number[];
}

/** Whatever drives the actuators: a servo bus, a ROS robot through rosbridge, a simulation. */
export interface MotorBus {
  readonly jointNames: readonly string[];
  /** Firmware as reported by the hardware itself, e.g. "3.11". */
  readFirmware(): Promise<string>;
  readState(): Promise<JointState>;
  writeGoalPositions(positionRad: readonly number[]): Promise<void>;
  /** Torque off must take effect even when the bus is mid-transaction: the e-stop path calls it. */
  setTorque(enabled: boolean): Promise<void>;
  /** Optional: seconds since the joints were last calibrated (recorded in /meta; null when absent). */
  readCalibrationAgeS?(): Promise<number>;
  /** Optional: lifetime motion cycles per joint, in joint order (recorded in /meta). */
  readCycleCounts?(): Promise<number[]>;
  /** Optional (serial servo buses): each servo's Homing_Offset register, decoded, in joint order (LeRobot units check it). */
  readHomingOffsetTicks?(): Promise<number[]>;
}

export interface CameraFrame {
  /** Capture time on the agent's clock: the device's own stamp mapped there where the source gives one (see `Camera.timestampClock`). */
  tNs: bigint;
  /** When the agent received the frame, on the agent's clock, where the driver knows it; `receivedNs - tNs` is the transport latency. */
  receivedNs?: bigint;
  width: number;
  height: number;
  /** JPEG bytes, as published on /camera/<name>. */
  jpeg: Uint8Array;
  /** Raw RGB24 pixels of the same frame when the source has them (a copy the frame owns). */
  rgb?: Uint8Array;
  /**
   * The same pixels without a copy, where the source can lend its own buffer (the simulated camera):
   * valid only until the camera's next capture, so read it at once and keep nothing. The episode
   * video encodes from it (recording/video-encoder.ts).
   */
  rgbView?(): Uint8Array;
}

/**
 * A camera's calibration as a cell's calibration file gives it, recorded in each episode's start
 * `/meta` (`cameras`) and shipped in calibration exports. Field names are the record's (snake_case).
 *
 * - `model` "pinhole": `fx`, `fy`, `cx`, `cy` in pixels and `distortion` as plumb_bob
 *   [k1, k2, p1, p2, k3]; "orthographic": `metres_per_px` (a telecentric overhead view).
 * - `extrinsics`: the camera's pose in `parent_frame` ("world", the mocap-calibrated cell frame, or a
 *   robot link such as "tool", the fingertip point): `translation_m` of the optical centre and
 *   `rotation_xyzw` taking camera axes to parent axes, the camera frame being optical (x right,
 *   y down, z forward along the view).
 */
export interface CameraCalibration {
  width: number;
  height: number;
  model: "pinhole" | "orthographic";
  fx?: number;
  fy?: number;
  cx?: number;
  cy?: number;
  distortion?: number[];
  metres_per_px?: number;
  extrinsics: { parent_frame: string; translation_m: [number, number, number]; rotation_xyzw: [number, number, number, number] };
}

/**
 * Which clock a camera's `CameraFrame.tNs` comes from, recorded in each episode's /meta
 * `camera_clocks`: "arrival" (stamped when the agent received it: no device time available),
 * "device_monotonic" (the device's stamp, already on CLOCK_MONOTONIC: V4L2/UVC), "device_offset"
 * (the device's stamp offset onto the agent clock: ffmpeg stream pts, ROS header stamps) or
 * "simulation" (the simulated world's clock, which is the agent's clock on a simulated cell).
 */
export interface CameraClockInfo {
  kind: "arrival" | "device_monotonic" | "device_offset" | "simulation";
  description: string;
  /** device_offset only: agent time minus device time, ns, as last applied. */
  offsetNs?: bigint;
}

export interface Camera {
  readonly name: string;
  readonly rateHz: number;
  /** The camera's calibration, when the cell has one for it. */
  readonly calibration?: CameraCalibration;
  capture(): Promise<CameraFrame>;
  /** Optional: where `tNs` comes from; undefined before the first frame. A camera without it stamps on arrival. */
  timestampClock?(): CameraClockInfo | undefined;
}

export interface Wrench {
  tNs: bigint;
  forceN: [number, number, number];
  torqueNm: [number, number, number];
}

export interface WristForceTorque {
  read(): Promise<Wrench>;
}

export interface ObjectPose {
  name: string;
  /** Position in the cell's world frame, metres. */
  positionM: [number, number, number];
  /** Orientation quaternion x, y, z, w. */
  orientation: [number, number, number, number];
}

export interface MocapSource {
  readPoses(): Promise<{ tNs: bigint; poses: ObjectPose[] }>;
}

/** The e-stop line. `onTrigger` fires once per press; the input stays pressed until released. */
export interface EstopInput {
  isPressed(): boolean;
  onTrigger(listener: () => void): () => void;
}

/** Gripper opening, 0 (closed) to 1 (open), and whether the fingers report holding something. */
export interface GripperSensor {
  read(): Promise<{ tNs: bigint; opening: number; holding: boolean }>;
}

/**
 * What the agent asks of the cell between episodes: put the scene into the given initial
 * conditions. A real cell does this with a reset routine or a technician's prompt; a simulator
 * places the objects. Returns the physical time the reset took.
 */
export interface SceneReset {
  reset(plan: ResetPlan): Promise<{ resetS: number }>;
}

/**
 * The physical description of an object the cell does not stock: a customer kit (`object`
 * "kit/<name>"), modelled as a box. A real cell ignores it (the kit itself is on the table); a
 * simulator builds the body from it.
 */
export interface ObjectShapeSpec {
  kind: "box";
  /** Box size along x, y, z of the object's frame, millimetres. */
  dimensionsMm: [number, number, number];
  massG: number;
  /** Rendering colour, sRGB 0..255. */
  colourRgb: [number, number, number];
}

export interface ResetPlan {
  /** Object name to the pose the reset should achieve; `shape` only for objects the cell does not stock (kits). */
  objects: Record<string, { object: string; positionM: [number, number, number]; yawRad: number; shape?: ObjectShapeSpec }>;
  /** Lighting preset realized for this episode, e.g. "nominal", "dim", "warm". */
  lighting: string;
  /** Distractor objects realized for this episode. */
  distractors: Array<{ object: string; positionM: [number, number, number]; yawRad: number }>;
  /** Robot joint positions to home to before the episode starts. */
  homeRad: number[];
}

/** Why an intervention happened: the run's `interventions` mode that called for it. */
export type InterventionKind = "on_stall" | "scripted";

/**
 * Optional: a hand in the scene during an episode, for runs declared with `interventions` on_stall
 * or scripted. The episode's control loop pauses while it runs and goes on afterwards; the runner
 * stamps the episode time and records it on /events and in /meta `interventions`.
 *
 * A simulated cell nudges the task objects back into their nominal reachable area and re-homes
 * the arm. A real cell has no such hook: its agent pauses the episode and asks a person at the
 * operator station instead (episode/intervention-gate.ts); a simulated cell in operator mode does the
 * same and applies this nudge to its world when the person presses Done. A cell with neither records
 * the stall and intervenes in nothing.
 */
export interface Intervention {
  /** `plan` is the episode's reset plan: the nominal object poses and the arm's home. */
  intervene(kind: InterventionKind, plan: ResetPlan): Promise<{ durationS: number; detail: string }>;
}

/**
 * Time as the agent sees it. Real cells use the monotonic wall clock; a simulated cell advances
 * its world when the agent sleeps, so an episode is deterministic for a given seed and can run
 * faster than real time.
 */
export interface Clock {
  nowNs(): bigint;
  /** Resolves once nowNs() >= tNs. */
  sleepUntil(tNs: bigint): Promise<void>;
}

/** What a policy sees each control period, restricted to its observation contract. */
export interface Observation {
  tNs: bigint;
  /** Present when the contract's `state` lists "joint_positions". */
  jointPositionsRad?: number[];
  jointVelocitiesRadS?: number[];
  gripperOpening?: number;
  /** Wrist force-torque, when the contract's `state` lists "ft_wrist". */
  wristWrench?: { forceN: [number, number, number]; torqueNm: [number, number, number] };
  /** Latest frame of each camera named in the contract. */
  cameras: Record<string, CameraFrame>;
  instruction?: string;
}

export interface PolicySession {
  /** Called once before the episode's first act(). */
  reset(info: { seed: number; instruction?: string; controlRateHz: number }): Promise<void>;
  /** Returns the commanded joint targets (the action space's dimension). */
  act(observation: Observation): Promise<number[]>;
  close(): Promise<void>;
  /** A container policy: the image that ran, pinned by its local id and registry digests (episode meta `policy_image`). */
  readonly image?: PolicyImagePin;
}

/** The image a container policy ran. */
export interface PolicyImagePin {
  image: string;
  /** The local image id, `sha256:<hex>`. */
  id: string;
  /** `<repository>@sha256:<hex>`; empty for an image built on the cell. */
  repo_digests: string[];
}

/** Starts policies: containers, checkpoints or endpoints. */
export interface PolicyRuntime {
  /** Policy sources this runtime can start, e.g. "assay/ref-policy:expert". */
  available(): string[];
  /** `policy` is the run's Policy object as submitted; `context` says whose episode it is. */
  start(policy: Record<string, unknown>, robot: PolicyRobot, context?: PolicyStartContext): Promise<PolicySession>;
}

/** What the episode runner tells a policy runtime besides the policy and the robot. */
export interface PolicyStartContext {
  /** The run the episode belongs to: a container runtime keeps one container per run warm across its episodes. */
  runId?: string;
  /**
   * The session's first inference may take up to this long, ms, and is never counted against the
   * policy's `latency_budget_ms` (a container's warm-up: loading weights, compiling, the first inference).
   */
  warmupMs?: number;
}

/** What a policy runtime knows of the cell it starts on. */
export interface PolicyRobot {
  model: string;
  dof: number;
  /** Frame sizes of the cell's calibrated cameras, by name: checkpoint models' image inputs are bounded by them. */
  cameras?: Record<string, { width: number; height: number }>;
}

/** Everything a cell has; optional instruments are absent where the cell lacks them. */
export interface CellHardware {
  motors: MotorBus;
  cameras: Camera[];
  gripper?: GripperSensor;
  wristFt?: WristForceTorque;
  mocap?: MocapSource;
  estop: EstopInput;
  scene: SceneReset;
  /** Absent when nobody can touch the scene mid-episode (see Intervention). */
  intervention?: Intervention;
  clock: Clock;
  policies: PolicyRuntime;
  /** Releases devices and sockets. */
  close(): Promise<void>;
}
