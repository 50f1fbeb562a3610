/**
 * Options of a ROS robot reached through rosbridge: one object, compiled once by
 * `compileRosMotorBusOptions` (defaults filled, values checked, unknown keys rejected).
 */

/** A gripper read from one joint of /joint_states. */
export interface RosGripperOptions {
  /** Joint in /joint_states whose position is the finger opening (need not be in jointNames). Required. */
  jointName: string;
  /** Joint position when fully closed (opening 0). Required. */
  closedPositionRad: number;
  /** Joint position when fully open (opening 1). Required. */
  openPositionRad: number;
  /** |effort| at or above which the fingers count as holding something (default 1.0, in the joint's effort unit). */
  holdingEffort: number;
}

/** A wrist force-torque sensor published as a WrenchStamped. */
export interface RosWristFtOptions {
  /** Topic (default "/wrist_ft"). */
  topic: string;
  /** Message type (default "geometry_msgs/msg/WrenchStamped"). */
  type: string;
}

export interface RosMotorBusOptions {
  /** rosbridge websocket URL, e.g. "ws://10.0.0.12:9090". Required. */
  url: string;
  /** Joint order the agent uses (the catalog's `joints`). Required. */
  jointNames: string[];
  /** Joint order of the position controller's command array (default: `jointNames`). */
  commandJointNames: string[];
  /** Joint state topic (default "/joint_states"). */
  jointStatesTopic: string;
  /** Joint state type (default "sensor_msgs/msg/JointState"). */
  jointStatesType: string;
  /** Position command topic (default "/joint_group_position_controller/commands"). */
  commandTopic: string;
  /** Position command type (default "std_msgs/msg/Float64MultiArray"). */
  commandType: string;
  /** Torque service, a SetBool: data=true enables (default "/assay/set_torque"). */
  setTorqueService: string;
  /** Torque service type (default "std_srvs/srv/SetBool"). */
  setTorqueType: string;
  /** Firmware service, a Trigger whose `message` is the firmware (default "/assay/firmware"). */
  firmwareService: string;
  /** Firmware service type (default "std_srvs/srv/Trigger"). */
  firmwareType: string;
  /** Oldest joint reading, by arrival on this machine, that readState returns, ms (default 100). */
  maxStateAgeMs: number;
  /**
   * Largest lag of a reading's header stamp behind this machine's wall clock, ms (default null: not
   * checked). Only meaningful when the robot and the cell PC share a clock (chrony/PTP).
   */
  maxStampLagMs: number | null;
  /** A service call not answered within this is failed, ms (default 2000). */
  serviceTimeoutMs: number;
  /** A connection attempt not open within this is abandoned and retried, ms (default 3000). */
  connectTimeoutMs: number;
  /** Reconnect backoff (defaults 100 ms, 5000 ms, jitter 0.5). */
  reconnect: { initialMs: number; maxMs: number; jitter: number };
  /** `throttle_rate` asked of rosbridge for /joint_states, ms (default 0: every message). */
  throttleRateMs: number;
  /** `queue_length` asked of rosbridge for subscriptions (default 1: only the newest matters). */
  queueLength: number;
  /** Whether JointState.effort is motor current in amperes (default false: currentA is NaN). */
  effortIsCurrentA: boolean;
  /** The robot's gripper, read from /joint_states (default null: none). */
  gripper: RosGripperOptions | null;
  /** The robot's wrist force-torque sensor (default null: none). */
  wristFt: RosWristFtOptions | null;
}

const DEFAULTS = {
  jointStatesTopic: "/joint_states",
  jointStatesType: "sensor_msgs/msg/JointState",
  commandTopic: "/joint_group_position_controller/commands",
  commandType: "std_msgs/msg/Float64MultiArray",
  setTorqueService: "/assay/set_torque",
  setTorqueType: "std_srvs/srv/SetBool",
  firmwareService: "/assay/firmware",
  firmwareType: "std_srvs/srv/Trigger",
  maxStateAgeMs: 100,
  maxStampLagMs: null,
  serviceTimeoutMs: 2000,
  connectTimeoutMs: 3000,
  reconnect: { initialMs: 100, maxMs: 5000, jitter: 0.5 },
  throttleRateMs: 0,
  queueLength: 1,
  effortIsCurrentA: false,
  gripper: null,
  wristFt: null,
} as const;

const TOP_KEYS = ["url", "jointNames", "commandJointNames", ...Object.keys(DEFAULTS)];

type Raw = Record<string, unknown>;

function isObject(value: unknown): value is Raw {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function rejectUnknown(obj: Raw, known: readonly string[], where: string): void {
  for (const key of Object.keys(obj)) {
    if (!known.includes(key)) throw new Error(`unknown ROS bus option "${where}${key}"; known keys: ${known.join(", ")}`);
  }
}

function text(obj: Raw, key: string, where: string, fallback?: string): string {
  const value = obj[key] ?? fallback;
  if (typeof value !== "string" || value.trim() === "") {
    throw new Error(`ROS bus option "${where}${key}" must be a non-empty string; got ${JSON.stringify(value)}`);
  }
  return value;
}

function rosName(obj: Raw, key: string, fallback: string): string {
  const value = text(obj, key, "", fallback);
  if (!value.startsWith("/")) throw new Error(`ROS bus option "${key}" must be an absolute ROS name starting with "/"; got ${JSON.stringify(value)}`);
  return value;
}

function num(obj: Raw, key: string, where: string, min: number, max = Infinity, fallback?: number): number {
  const value = obj[key] ?? fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) {
    throw new Error(`ROS bus option "${where}${key}" must be a number in [${min}, ${max}]; got ${JSON.stringify(value)}`);
  }
  return value;
}

function names(obj: Raw, key: string, fallback?: string[]): string[] {
  const value = obj[key] ?? fallback;
  if (!Array.isArray(value) || value.length === 0 || !value.every((n) => typeof n === "string" && n !== "")) {
    throw new Error(`ROS bus option "${key}" must be a non-empty array of joint names; got ${JSON.stringify(value)}`);
  }
  if (new Set(value).size !== value.length) throw new Error(`ROS bus option "${key}" has duplicate joint names: ${JSON.stringify(value)}`);
  return [...value] as string[];
}

function compileGripper(raw: unknown): RosGripperOptions | null {
  if (raw === null || raw === undefined) return null;
  if (!isObject(raw)) throw new Error(`ROS bus option "gripper" must be an object or null; got ${JSON.stringify(raw)}`);
  rejectUnknown(raw, ["jointName", "closedPositionRad", "openPositionRad", "holdingEffort"], "gripper.");
  const gripper = {
    jointName: text(raw, "jointName", "gripper."),
    closedPositionRad: num(raw, "closedPositionRad", "gripper.", -Infinity),
    openPositionRad: num(raw, "openPositionRad", "gripper.", -Infinity),
    holdingEffort: num(raw, "holdingEffort", "gripper.", 0, Infinity, 1.0),
  };
  if (gripper.closedPositionRad === gripper.openPositionRad) {
    throw new Error(`ROS bus option "gripper": closedPositionRad and openPositionRad must differ; both are ${gripper.openPositionRad}`);
  }
  return gripper;
}

function compileWristFt(raw: unknown): RosWristFtOptions | null {
  if (raw === null || raw === undefined) return null;
  if (!isObject(raw)) throw new Error(`ROS bus option "wristFt" must be an object or null; got ${JSON.stringify(raw)}`);
  rejectUnknown(raw, ["topic", "type"], "wristFt.");
  const topic = text(raw, "topic", "wristFt.", "/wrist_ft");
  if (!topic.startsWith("/")) throw new Error(`ROS bus option "wristFt.topic" must start with "/"; got ${JSON.stringify(topic)}`);
  return { topic, type: text(raw, "type", "wristFt.", "geometry_msgs/msg/WrenchStamped") };
}

/** Fills defaults, validates, and rejects unknown keys with a message naming the key. */
export function compileRosMotorBusOptions(raw: unknown): RosMotorBusOptions {
  if (!isObject(raw)) throw new Error(`ROS bus options must be an object; got ${JSON.stringify(raw)}`);
  rejectUnknown(raw, TOP_KEYS, "");
  const url = text(raw, "url", "");
  if (!/^wss?:\/\/[^\s/]+/.test(url)) throw new Error(`ROS bus option "url" must be a ws:// or wss:// URL; got ${JSON.stringify(url)}`);
  const jointNames = names(raw, "jointNames");
  const commandJointNames = names(raw, "commandJointNames", jointNames);
  const missing = commandJointNames.filter((n) => !jointNames.includes(n));
  if (missing.length > 0 || commandJointNames.length !== jointNames.length) {
    throw new Error(`ROS bus option "commandJointNames" must be a reordering of jointNames; not in jointNames: ${JSON.stringify(missing)}`);
  }
  const reconnectRaw = raw.reconnect ?? {};
  if (!isObject(reconnectRaw)) throw new Error(`ROS bus option "reconnect" must be an object; got ${JSON.stringify(reconnectRaw)}`);
  rejectUnknown(reconnectRaw, ["initialMs", "maxMs", "jitter"], "reconnect.");
  const reconnect = {
    initialMs: num(reconnectRaw, "initialMs", "reconnect.", 1, Infinity, DEFAULTS.reconnect.initialMs),
    maxMs: num(reconnectRaw, "maxMs", "reconnect.", 1, Infinity, DEFAULTS.reconnect.maxMs),
    jitter: num(reconnectRaw, "jitter", "reconnect.", 0, 1, DEFAULTS.reconnect.jitter),
  };
  if (reconnect.maxMs < reconnect.initialMs) {
    throw new Error(`ROS bus option "reconnect.maxMs" must be >= reconnect.initialMs (${reconnect.initialMs}); got ${reconnect.maxMs}`);
  }
  const stampLag = raw.maxStampLagMs ?? null;
  const effortIsCurrentA = raw.effortIsCurrentA ?? DEFAULTS.effortIsCurrentA;
  if (typeof effortIsCurrentA !== "boolean") throw new Error(`ROS bus option "effortIsCurrentA" must be a boolean; got ${JSON.stringify(effortIsCurrentA)}`);
  const options: RosMotorBusOptions = {
    url,
    jointNames,
    commandJointNames,
    jointStatesTopic: rosName(raw, "jointStatesTopic", DEFAULTS.jointStatesTopic),
    jointStatesType: text(raw, "jointStatesType", "", DEFAULTS.jointStatesType),
    commandTopic: rosName(raw, "commandTopic", DEFAULTS.commandTopic),
    commandType: text(raw, "commandType", "", DEFAULTS.commandType),
    setTorqueService: rosName(raw, "setTorqueService", DEFAULTS.setTorqueService),
    setTorqueType: text(raw, "setTorqueType", "", DEFAULTS.setTorqueType),
    firmwareService: rosName(raw, "firmwareService", DEFAULTS.firmwareService),
    firmwareType: text(raw, "firmwareType", "", DEFAULTS.firmwareType),
    maxStateAgeMs: num(raw, "maxStateAgeMs", "", 1, Infinity, DEFAULTS.maxStateAgeMs),
    maxStampLagMs: stampLag === null ? null : num(raw, "maxStampLagMs", "", 1),
    serviceTimeoutMs: num(raw, "serviceTimeoutMs", "", 1, Infinity, DEFAULTS.serviceTimeoutMs),
    connectTimeoutMs: num(raw, "connectTimeoutMs", "", 1, Infinity, DEFAULTS.connectTimeoutMs),
    reconnect,
    throttleRateMs: num(raw, "throttleRateMs", "", 0, Infinity, DEFAULTS.throttleRateMs),
    queueLength: num(raw, "queueLength", "", 0, Infinity, DEFAULTS.queueLength),
    effortIsCurrentA,
    gripper: compileGripper(raw.gripper),
    wristFt: compileWristFt(raw.wristFt),
  };
  return options;
}
