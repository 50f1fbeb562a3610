/**
 * Puts emulated servos behind a real device path, for an unmodified agent process: a pseudo-terminal
 * pair from node-pty (npm only, no socat), the emulator on the master end, and the agent opens the
 * slave end (`agentPath`, /dev/pts/N) as its servo bus exactly like /dev/ttyUSB0:
 *
 *   agent: SerialPort(/dev/pts/N) <--bytes--> pty master (this process) <--> ServoBusEmulator
 *
 * The pair comes from openpty(3) through node-pty's native `open(cols, rows)`; no process is spawned.
 * node-pty's public `open()` is not used: it starts reading the slave in this process, which would
 * steal the bytes meant for the agent.
 *
 * Raw bytes both ways: the master of a Linux pty has no line discipline processing of its own (its
 * termios are all-off), and serialport sets the slave raw when the agent opens it (iflag IGNPAR only,
 * oflag 0, lflag 0: no echo, no CR/LF translation, no ^C, no XON/XOFF), as it does on a real serial
 * device, which also starts out cooked. Until a client opens the slave raw it is a cooked terminal,
 * so nothing is written to it before then (the emulator only ever answers requests).
 *
 * This process keeps its own descriptor on the slave for the bridge's lifetime, so the agent may open
 * and close the device as often as it likes (the doctor opens it twice) without the master seeing a
 * hangup. openpty's descriptors are not close-on-exec: a child spawned while a bridge is open inherits
 * them, harmlessly (it neither reads nor writes them); the pty goes away when the last holder closes.
 *
 * Linux (node-pty's openpty exists on macOS too; untested there); node-pty compiles at `npm install` (node-gyp, python3, make, g++).
 * Call close() when done.
 *
 * Stand-alone: `npx tsx simulators/servo-bus/pty-bridge.ts [--servos 6] [--firmware 3.11]
 * [--model sts3215]` prints the device path and serves until Ctrl-C.
 */
import { closeSync } from "node:fs";
import { createRequire } from "node:module";
import { ReadStream, isatty } from "node:tty";
import { pathToFileURL } from "node:url";
import { SERVO_MODELS, controlTable, type ServoModel } from "../../cell-agent/devices/servo/control-tables.js";
import { ServoBusEmulator, ServoEmulatorOptions } from "./servo-emulator.js";

export interface PtyBridge {
  /** The device path the agent opens (/dev/pts/N). */
  agentPath: string;
  emulator: ServoBusEmulator;
  close(): Promise<void>;
}

/** One pseudo-terminal pair: the slave's path for a client, the master's bytes for us. */
export interface PtyPair {
  /** The slave device path, e.g. /dev/pts/3; open it with serialport like any serial device. */
  agentPath: string;
  /** Writes bytes to the master: the slave's reader receives them. */
  write(bytes: Uint8Array): void;
  /** Bytes written to the slave, as they arrive at the master. Returns an unsubscribe function. */
  onData(listener: (bytes: Buffer) => void): () => void;
  close(): Promise<void>;
}

interface NativePty {
  open(cols: number, rows: number): { master: number; slave: number; pty: string };
}

const require = createRequire(import.meta.url);

function nativePty(): NativePty {
  let module: { native?: Partial<NativePty> | null };
  try {
    module = require("node-pty") as typeof module;
  } catch (error) {
    throw new Error(`the servo pty bridge needs the node-pty package, which did not load (run npm install; it compiles with node-gyp): ${(error as Error).message}`);
  }
  const native = module.native;
  if (!native || typeof native.open !== "function") {
    throw new Error(`node-pty on ${process.platform} has no native open(); the servo pty bridge needs Linux or macOS`);
  }
  return native as NativePty;
}

/** Makes a pty pair (openpty(3)) with no process on it. */
export function openPtyPair(): PtyPair {
  const { master, slave, pty } = nativePty().open(80, 24);
  if (!isatty(master)) {
    closeSync(master);
    closeSync(slave);
    throw new Error(`openpty gave a master descriptor (${master}) that is not a terminal`);
  }
  // A tty stream over the master: libuv reads and writes it non-blocking (a master is never reopened).
  const stream = new ReadStream(master);
  const listeners = new Set<(bytes: Buffer) => void>();
  let closed = false;
  let failure: Error | undefined;
  stream.on("data", (chunk: Buffer) => {
    for (const listener of listeners) listener(chunk);
  });
  stream.on("error", (error: Error) => {
    // EIO would mean no slave descriptor is left, which cannot happen while we hold ours.
    failure = error;
  });
  return {
    agentPath: pty,
    write(bytes) {
      if (closed) throw new Error(`the pty pair ${pty} is closed`);
      if (failure) throw new Error(`the pty master of ${pty} failed: ${failure.message}`);
      stream.write(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    },
    onData(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      if (closed) return;
      closed = true;
      listeners.clear();
      // The master first: closing our slave first would hang the master up (EIO) under the stream.
      await new Promise<void>((resolve) => {
        if (stream.destroyed) return resolve();
        stream.once("close", () => resolve());
        stream.destroy();
      });
      try {
        closeSync(slave);
      } catch {
        // already closed
      }
    },
  };
}

/** Makes a pty pair and attaches a fresh emulator to its master. `nowMs` defaults to performance.now. */
export async function startPtyBridge(options: Omit<ServoEmulatorOptions, "nowMs"> & { nowMs?: () => number }): Promise<PtyBridge> {
  const { nowMs = () => performance.now(), ...rest } = options;
  const emulator = new ServoBusEmulator({ ...rest, nowMs });
  const pair = openPtyPair();
  // A request may arrive split over several chunks (or several in one): the emulator's parser reassembles them.
  const stopReading = pair.onData((chunk) => emulator.write(new Uint8Array(chunk)));
  const unsubscribe = emulator.onData((bytes) => pair.write(bytes));
  return {
    agentPath: pair.agentPath,
    emulator,
    async close() {
      unsubscribe();
      stopReading();
      await pair.close();
    },
  };
}

function argValue(argv: string[], name: string, fallback: string): string {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] ? argv[i + 1] : fallback;
}

async function main(argv: string[]): Promise<void> {
  const count = Number(argValue(argv, "--servos", "6"));
  const model = argValue(argv, "--model", "sts3215") as ServoModel;
  if (!SERVO_MODELS.includes(model)) throw new Error(`--model must be one of ${SERVO_MODELS.join(", ")}; got ${model}`);
  if (!Number.isInteger(count) || count < 1 || count > 252) throw new Error(`--servos must be a whole number of servos (1..252); got ${count}`);
  const { protocol } = controlTable(model);
  const firmware = argValue(argv, "--firmware", protocol === "feetech" ? "3.11" : "46");
  const bridge = await startPtyBridge({ firmware, servos: Array.from({ length: count }, (_, i) => ({ id: i + 1, model })) });
  console.log(`${count} emulated ${model} servos (ids 1..${count}, firmware ${firmware}) on ${bridge.agentPath}`);
  console.log(`set "motors": {"kind": "${protocol}", "path": "${bridge.agentPath}", ...} in the agent config; Ctrl-C stops`);
  const stop = () => void bridge.close().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  main(process.argv.slice(2)).catch((error: Error) => {
    console.error(error.message);
    process.exit(1);
  });
}
