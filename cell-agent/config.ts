/**
 * The cell agent's options: one object, compiled once (defaults filled, values checked, unknown keys
 * rejected) by `compileAgentConfig`.
 */
import { readFileSync } from "node:fs";

export interface AgentConfig {
  /** Cell identifier known to the coordinator, e.g. "so101-a". Required. */
  cellId: string;
  /** host:port of the coordinator's CellLink server (default "127.0.0.1:50051"). */
  coordinatorAddress: string;
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
}

const DEFAULTS = {
  coordinatorAddress: "127.0.0.1:50051",
  heartbeatIntervalMs: 1000,
  reconnect: { initialMs: 200, maxMs: 10_000, jitter: 0.5 },
  uploadChunkBytes: 262_144,
};

const TOP_KEYS = ["cellId", "coordinatorAddress", "cellToken", "robotModel", "environment", "dataDir", "heartbeatIntervalMs", "reconnect", "uploadChunkBytes"];
const RECONNECT_KEYS = ["initialMs", "maxMs", "jitter"];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function rejectUnknown(obj: Record<string, unknown>, known: string[], where: string): void {
  for (const key of Object.keys(obj)) {
    if (!known.includes(key)) {
      throw new Error(`unknown agent config key "${where}${key}"; known keys: ${known.join(", ")}`);
    }
  }
}

function text(obj: Record<string, unknown>, key: string, fallback?: string): string {
  const value = obj[key] ?? fallback;
  if (typeof value !== "string" || value.trim() === "") {
    throw new Error(`agent config "${key}" must be a non-empty string; got ${JSON.stringify(value)}`);
  }
  return value;
}

function number(obj: Record<string, unknown>, key: string, fallback: number, where: string, min: number, max = Infinity): number {
  const value = obj[key] ?? fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) {
    throw new Error(`agent config "${where}${key}" must be a number in [${min}, ${max}]; got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Fills defaults, validates, and rejects unknown keys with a message naming the key. */
export function compileAgentConfig(raw: unknown): AgentConfig {
  if (!isObject(raw)) throw new Error(`agent config must be an object; got ${JSON.stringify(raw)}`);
  rejectUnknown(raw, TOP_KEYS, "");
  const reconnectRaw = raw.reconnect ?? {};
  if (!isObject(reconnectRaw)) throw new Error(`agent config "reconnect" must be an object; got ${JSON.stringify(reconnectRaw)}`);
  rejectUnknown(reconnectRaw, RECONNECT_KEYS, "reconnect.");
  const address = text(raw, "coordinatorAddress", DEFAULTS.coordinatorAddress);
  if (!/^[^\s:]+:\d+$/.test(address)) {
    throw new Error(`agent config "coordinatorAddress" must be "host:port"; got ${JSON.stringify(address)}`);
  }
  const reconnect = {
    initialMs: number(reconnectRaw, "initialMs", DEFAULTS.reconnect.initialMs, "reconnect.", 1),
    maxMs: number(reconnectRaw, "maxMs", DEFAULTS.reconnect.maxMs, "reconnect.", 1),
    jitter: number(reconnectRaw, "jitter", DEFAULTS.reconnect.jitter, "reconnect.", 0, 1),
  };
  if (reconnect.maxMs < reconnect.initialMs) {
    throw new Error(`agent config "reconnect.maxMs" (${reconnect.maxMs}) must be at least "reconnect.initialMs" (${reconnect.initialMs})`);
  }
  return {
    cellId: text(raw, "cellId"),
    coordinatorAddress: address,
    cellToken: text(raw, "cellToken"),
    robotModel: text(raw, "robotModel"),
    environment: text(raw, "environment"),
    dataDir: text(raw, "dataDir"),
    heartbeatIntervalMs: number(raw, "heartbeatIntervalMs", DEFAULTS.heartbeatIntervalMs, "", 10),
    reconnect,
    uploadChunkBytes: Math.floor(number(raw, "uploadChunkBytes", DEFAULTS.uploadChunkBytes, "", 1024, 4 * 1024 * 1024)),
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
