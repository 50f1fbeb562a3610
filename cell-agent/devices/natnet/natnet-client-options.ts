/**
 * Options of `NatNetClient`: one object, compiled once by `compileNatNetClientOptions` (defaults
 * filled, values checked, unknown keys rejected).
 */
import type { NatNetVersion } from "./natnet-messages.js";

export interface NatNetClientOptions {
  /** Address of the PC running Motive (default "127.0.0.1"). */
  serverAddress: string;
  /** Motive's command port (default 1510; "Command Port" in Motive's streaming settings). */
  commandPort: number;
  /** Local address the client's socket binds to (default "0.0.0.0"; the port is ephemeral). */
  localAddress: string;
  /** Oldest frame, by arrival on this machine, that readPoses returns, ms of the agent clock (default 100). */
  maxFrameAgeMs: number;
  /** NAT_CONNECT is re-sent this often until Motive answers, ms (default 250). */
  connectRetryMs: number;
  /** `connect()` gives up after this, ms (default 3000). */
  connectTimeoutMs: number;
  /** Unicast keep-alive period, ms (default 1000): Motive drops unicast clients that go quiet. */
  keepAliveMs: number;
  /** Model definitions are asked again at most this often when a frame names an unknown body, ms (default 200). */
  modelDefRetryMs: number;
  /** Bitstream version asked for in NAT_CONNECT (default [0,0,0,0]: whatever Motive streams). */
  requestedVersion: NatNetVersion;
}

export type NatNetClientInput = Partial<NatNetClientOptions>;

export const NATNET_CLIENT_DEFAULTS: NatNetClientOptions = {
  serverAddress: "127.0.0.1",
  commandPort: 1510,
  localAddress: "0.0.0.0",
  maxFrameAgeMs: 100,
  connectRetryMs: 250,
  connectTimeoutMs: 3000,
  keepAliveMs: 1000,
  modelDefRetryMs: 200,
  requestedVersion: [0, 0, 0, 0],
};

const KEYS = Object.keys(NATNET_CLIENT_DEFAULTS);

function positive(name: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new RangeError(`NatNet client option ${name} must be a positive number of ms; got ${JSON.stringify(value)}`);
  }
  return value;
}

export function compileNatNetClientOptions(input: NatNetClientInput = {}): NatNetClientOptions {
  for (const key of Object.keys(input)) if (!KEYS.includes(key)) throw new RangeError(`unknown NatNet client option "${key}"; known: ${KEYS.join(", ")}`);
  const o = { ...NATNET_CLIENT_DEFAULTS, ...input };
  for (const name of ["serverAddress", "localAddress"] as const) {
    if (typeof o[name] !== "string" || o[name] === "") throw new RangeError(`NatNet client option ${name} must be an IP address; got ${JSON.stringify(o[name])}`);
  }
  if (!Number.isInteger(o.commandPort) || o.commandPort < 1 || o.commandPort > 65535) {
    throw new RangeError(`NatNet client option commandPort must be a port number 1..65535; got ${JSON.stringify(o.commandPort)}`);
  }
  const v = o.requestedVersion;
  if (!Array.isArray(v) || v.length !== 4 || !v.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) {
    throw new RangeError(`NatNet client option requestedVersion must be four bytes [major, minor, build, revision]; got ${JSON.stringify(v)}`);
  }
  return {
    ...o,
    maxFrameAgeMs: positive("maxFrameAgeMs", o.maxFrameAgeMs),
    connectRetryMs: positive("connectRetryMs", o.connectRetryMs),
    connectTimeoutMs: positive("connectTimeoutMs", o.connectTimeoutMs),
    keepAliveMs: positive("keepAliveMs", o.keepAliveMs),
    modelDefRetryMs: positive("modelDefRetryMs", o.modelDefRetryMs),
    requestedVersion: [...v] as unknown as NatNetVersion,
  };
}
