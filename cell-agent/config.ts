/**
 * The cell agent's options: one object, compiled once (defaults filled, values checked, unknown keys
 * rejected) by `compileAgentConfig`. The hardware sections are in config-devices.ts, the policies
 * section in config-policies.ts, the field readers in config-fields.ts.
 */
import { readFileSync } from "node:fs";
import { integer, isObject, number, rejectUnknown, section, text } from "./config-fields.js";
import { compileCameras, compileEstop, compileMocap, compileMotors, compileSafety, type CameraConfig, type EstopConfig, type MocapConfig, type MotorsConfig, type SafetyConfig } from "./config-devices.js";
import { compilePolicies, type PoliciesConfig } from "./config-policies.js";

export type {
  CameraConfig, DeadmanConfig, EstopConfig, MjpegHttpCameraConfig, MocapConfig, MotorsConfig, RosCameraConfig, RosMotorsConfig, SafetyConfig, SerialBusConfig,
  SerialMotorsConfig, V4l2CameraConfig,
} from "./config-devices.js";
export type { PoliciesConfig } from "./config-policies.js";

export interface SceneResetConfig {
  /** How long the agent waits for a technician's POST /scene-ready after homing, ms (default 600000). */
  confirmTimeoutMs: number;
  /** How long homing to the plan's home pose may take, ms (default 5000). */
  homingMs: number;
}

export interface AgentConfig {
  /** Cell identifier known to the coordinator, e.g. "so101-a". Required. */
  cellId: string;
  /**
   * host:port of each coordinator's CellLink server, in the order the agent tries them (default
   * ["127.0.0.1:50051"]). The file may give one address as "coordinatorAddress" instead.
   */
  coordinatorAddresses: string[];
  /** Bearer token sent as gRPC metadata on every call. Required. */
  cellToken: string;
  /** Robot model id from firmware-pins' catalog, e.g. "so101". Required. */
  robotModel: string;
  /** Environment pin the cell sits in, e.g. "tabletop@1". Required. */
  environment: string;
  /** Directory for the outbox, recordings and upload queue. Required. */
  dataDir: string;
  /** Heartbeat period, ms (default 1000). */
  heartbeatIntervalMs: number;
  /** Reconnect backoff (defaults 200 ms, 10000 ms, jitter 0.5). */
  reconnect: { initialMs: number; maxMs: number; jitter: number };
  /** Bytes per UploadArtifact chunk (default 262144). */
  uploadChunkBytes: number;
  /** The arm or robot (default null: none; `cell-agent run` requires one). */
  motors: MotorsConfig | null;
  /** Cameras: V4L2/UVC devices read through ffmpeg, or MJPEG-over-HTTP streams (default []). */
  cameras: CameraConfig[];
  /** Motion capture (default null: none). */
  mocap: MocapConfig | null;
  /** The e-stop input (default null; `cell-agent run` requires one). */
  estop: EstopConfig | null;
  /** Loopback port of the agent's /metrics and /scene-ready endpoint (default 9464; 0 = any free port). */
  metricsPort: number;
  /** Policy runtime (default {runtime: "none", gpus: false, startTimeoutMs: 120000, latencyBudgetMs: 200, images: []}). */
  policies: PoliciesConfig;
  /** Real-cell scene reset (default {confirmTimeoutMs: 600000, homingMs: 5000}). */
  sceneReset: SceneResetConfig;
  /** Safety envelope and dead-man output (default {envelope: {}, deadman: null}). */
  safety: SafetyConfig;
  /**
   * A person at the operator station judges success (the cell offers the `operator` instrument): after an
   * episode of a task with operator.success the agent waits up to `timeoutMs` for the label (default
   * 600000), then reports the episode unlabelled. Default null: the cell offers no labels.
   */
  labels: { timeoutMs: number } | null;
  /**
   * A person at the operator station performs a run's interventions (on_stall, scripted): an offer stands
   * `offerTimeoutMs` (default 60000) before the episode goes on without help; once the person pressed
   * Intervene the arm is held up to `holdTimeoutMs` (default 600000) for Done, else the attempt ends.
   */
  interventions: { offerTimeoutMs: number; holdTimeoutMs: number };
}

const DEFAULTS = {
  coordinatorAddresses: ["127.0.0.1:50051"],
  heartbeatIntervalMs: 1000,
  reconnect: { initialMs: 200, maxMs: 10_000, jitter: 0.5 },
  uploadChunkBytes: 262_144,
  metricsPort: 9464,
  sceneReset: { confirmTimeoutMs: 600_000, homingMs: 5000 },
  interventions: { offerTimeoutMs: 60_000, holdTimeoutMs: 600_000 },
};

const TOP_KEYS = [
  "cellId", "coordinatorAddresses", "coordinatorAddress", "cellToken", "robotModel", "environment", "dataDir", "heartbeatIntervalMs", "reconnect", "uploadChunkBytes",
  "motors", "cameras", "mocap", "estop", "metricsPort", "policies", "sceneReset", "safety", "labels", "interventions",
];
const RECONNECT_KEYS = ["initialMs", "maxMs", "jitter"];

/** Fills defaults, validates, and rejects unknown keys with a message naming the key. */
export function compileAgentConfig(raw: unknown): AgentConfig {
  if (!isObject(raw)) throw new Error(`agent config must be an object; got ${JSON.stringify(raw)}`);
  rejectUnknown(raw, TOP_KEYS, "");
  const reconnectRaw = raw.reconnect ?? {};
  if (!isObject(reconnectRaw)) throw new Error(`agent config "reconnect" must be an object; got ${JSON.stringify(reconnectRaw)}`);
  rejectUnknown(reconnectRaw, RECONNECT_KEYS, "reconnect.");
  const reconnect = {
    initialMs: number(reconnectRaw, "initialMs", DEFAULTS.reconnect.initialMs, "reconnect.", 1),
    maxMs: number(reconnectRaw, "maxMs", DEFAULTS.reconnect.maxMs, "reconnect.", 1),
    jitter: number(reconnectRaw, "jitter", DEFAULTS.reconnect.jitter, "reconnect.", 0, 1),
  };
  if (reconnect.maxMs < reconnect.initialMs) {
    throw new Error(`agent config "reconnect.maxMs" (${reconnect.maxMs}) must be at least "reconnect.initialMs" (${reconnect.initialMs})`);
  }
  const config: AgentConfig = {
    cellId: text(raw, "cellId"),
    coordinatorAddresses: compileCoordinatorAddresses(raw),
    cellToken: text(raw, "cellToken"),
    robotModel: text(raw, "robotModel"),
    environment: text(raw, "environment"),
    dataDir: text(raw, "dataDir"),
    heartbeatIntervalMs: number(raw, "heartbeatIntervalMs", DEFAULTS.heartbeatIntervalMs, "", 10),
    reconnect,
    uploadChunkBytes: Math.floor(number(raw, "uploadChunkBytes", DEFAULTS.uploadChunkBytes, "", 1024, 4 * 1024 * 1024)),
    motors: compileMotors(raw.motors, text(raw, "robotModel")),
    cameras: compileCameras(raw.cameras, raw.motors),
    mocap: compileMocap(raw.mocap),
    estop: compileEstop(raw.estop),
    metricsPort: integer(raw, "metricsPort", DEFAULTS.metricsPort, "", 0, 65535),
    policies: compilePolicies(raw.policies),
    sceneReset: compileSceneReset(raw.sceneReset),
    safety: compileSafety(raw.safety),
    labels: raw.labels === undefined || raw.labels === null ? null : compileLabels(raw.labels),
    interventions: compileInterventions(raw.interventions),
  };
  const deadman = config.safety.deadman;
  if (deadman?.kind === "serial" && config.estop?.kind === "serial" && deadman.path === config.estop.path) {
    throw new Error(`agent config "safety.deadman.path" is the e-stop's serial port (${JSON.stringify(deadman.path)}), whose RTS and DTR feed the e-stop loop; give the dead-man output its own serial adapter`);
  }
  return config;
}

/**
 * "coordinatorAddresses" (a list), or the older "coordinatorAddress" (one address) as a list of one;
 * not both, so no one has to guess which the agent uses.
 */
function compileCoordinatorAddresses(raw: Record<string, unknown>): string[] {
  // null is "not given", as for every other key.
  const single = raw.coordinatorAddress ?? undefined;
  const list = raw.coordinatorAddresses ?? undefined;
  if (single !== undefined && list !== undefined) {
    throw new Error(`agent config gives both "coordinatorAddress" (${JSON.stringify(single)}) and "coordinatorAddresses" (${JSON.stringify(list)}); keep only "coordinatorAddresses", listing every coordinator the cell may use`);
  }
  if (list === undefined) return single === undefined ? [...DEFAULTS.coordinatorAddresses] : [coordinatorAddress(single, "coordinatorAddress")];
  if (!Array.isArray(list) || list.length === 0) {
    throw new Error(`agent config "coordinatorAddresses" must be a non-empty list of "host:port", e.g. ["coord-a.lab:50051", "coord-b.lab:50051"]; got ${JSON.stringify(list)}`);
  }
  const addresses = list.map((entry, i) => coordinatorAddress(entry, `coordinatorAddresses[${i}]`));
  // Host names are case-insensitive: "Coord.lab:50051" and "coord.lab:50051" are one coordinator.
  const keys = addresses.map((a) => a.toLowerCase());
  const second = keys.findIndex((k, i) => keys.indexOf(k) !== i);
  if (second >= 0) {
    const first = keys.indexOf(keys[second]!);
    throw new Error(`agent config "coordinatorAddresses" lists ${JSON.stringify(addresses[first])} twice (entries ${first} and ${second}); list each coordinator once`);
  }
  return addresses;
}

function coordinatorAddress(value: unknown, where: string): string {
  const match = typeof value === "string" ? /^[^\s:]+:(\d+)$/.exec(value) : null;
  const port = match ? Number(match[1]) : 0;
  if (!match || port < 1 || port > 65535) {
    throw new Error(`agent config "${where}" must be "host:port" with a port from 1 to 65535, e.g. "coord.lab:50051"; got ${JSON.stringify(value)}`);
  }
  return value as string;
}

function compileSceneReset(raw: unknown): SceneResetConfig {
  const reset = section(raw ?? {}, "sceneReset", ["confirmTimeoutMs", "homingMs"]);
  return {
    confirmTimeoutMs: number(reset, "confirmTimeoutMs", DEFAULTS.sceneReset.confirmTimeoutMs, "sceneReset.", 1000),
    homingMs: number(reset, "homingMs", DEFAULTS.sceneReset.homingMs, "sceneReset.", 0),
  };
}

function compileLabels(raw: unknown): { timeoutMs: number } {
  const labels = section(raw, "labels", ["timeoutMs"]);
  return { timeoutMs: number(labels, "timeoutMs", 600_000, "labels.", 1000) };
}

function compileInterventions(raw: unknown): { offerTimeoutMs: number; holdTimeoutMs: number } {
  const section_ = section(raw ?? {}, "interventions", ["offerTimeoutMs", "holdTimeoutMs"]);
  return {
    offerTimeoutMs: number(section_, "offerTimeoutMs", DEFAULTS.interventions.offerTimeoutMs, "interventions.", 1000),
    holdTimeoutMs: number(section_, "holdTimeoutMs", DEFAULTS.interventions.holdTimeoutMs, "interventions.", 1000),
  };
}

/** Reads a JSON file and compiles it; errors name the file. */
export function loadAgentConfig(path: string): AgentConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new Error(`cannot read agent config ${path}: ${(error as Error).message}`);
  }
  try {
    return compileAgentConfig(raw);
  } catch (error) {
    throw new Error(`${path}: ${(error as Error).message}`);
  }
}
