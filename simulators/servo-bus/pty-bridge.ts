/**
 * Puts emulated servos behind a real device path, for an unmodified agent process: socat makes a
 * pseudo-terminal pair, the emulator sits on one end, and the agent opens the other as its servo bus
 * (e.g. ASSAY servo path = bridge.agentPath).
 *
 * NOTE: needs socat on the PATH. Call close() when done, or the socat process outlives the test.
 */
import { ChildProcess, spawn, spawnSync } from "node:child_process";
import { SerialPort } from "serialport";
import { ServoBusEmulator, ServoEmulatorOptions } from "./servo-emulator.js";

export interface PtyBridge {
  /** The device path the agent opens. */
  agentPath: string;
  /** The end the emulator holds. */
  emulatorPath: string;
  emulator: ServoBusEmulator;
  close(): Promise<void>;
}

export const SOCAT_MISSING = "socat is not installed; the pty bridge needs it (apt-get install socat)";

export function socatAvailable(): boolean {
  return spawnSync("which", ["socat"], { stdio: "ignore" }).status === 0;
}

function waitForPtys(socat: ChildProcess, timeoutMs: number): Promise<[string, string]> {
  return new Promise((resolve, reject) => {
    const paths: string[] = [];
    let log = "";
    const timer = setTimeout(() => done(new Error(`socat did not report two ptys within ${timeoutMs} ms; its output: ${log.trim()}`)), timeoutMs);
    const done = (error: Error | null): void => {
      clearTimeout(timer);
      socat.stderr?.removeListener("data", onData);
      socat.removeListener("exit", onExit);
      if (error) reject(error);
      else resolve([paths[0], paths[1]]);
    };
    const onData = (chunk: Buffer): void => {
      log += chunk.toString();
      for (const match of chunk.toString().matchAll(/PTY is (\S+)/g)) paths.push(match[1]);
      if (paths.length >= 2) done(null);
    };
    const onExit = (code: number | null): void => done(new Error(`socat exited with code ${code} before making the ptys; its output: ${log.trim()}`));
    socat.stderr?.on("data", onData);
    socat.on("exit", onExit);
  });
}

/** Starts socat and attaches a fresh emulator. `nowMs` defaults to performance.now. */
export async function startPtyBridge(options: Omit<ServoEmulatorOptions, "nowMs"> & { nowMs?: () => number; baudRate?: number }): Promise<PtyBridge> {
  if (!socatAvailable()) throw new Error(SOCAT_MISSING);
  const { baudRate = 1_000_000, nowMs = () => performance.now(), ...rest } = options;
  const emulator = new ServoBusEmulator({ ...rest, nowMs });
  const socat = spawn("socat", ["-d", "-d", "pty,raw,echo=0", "pty,raw,echo=0"], { stdio: ["ignore", "ignore", "pipe"] });
  let emulatorPath: string;
  let agentPath: string;
  try {
    [emulatorPath, agentPath] = await waitForPtys(socat, 5000);
  } catch (error) {
    socat.kill();
    throw error;
  }
  const port = new SerialPort({ path: emulatorPath, baudRate, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((error) => (error ? reject(error) : resolve())));
  port.on("data", (chunk: Buffer) => emulator.write(new Uint8Array(chunk)));
  const unsubscribe = emulator.onData((bytes) => port.write(Buffer.from(bytes)));
  return {
    agentPath,
    emulatorPath,
    emulator,
    async close() {
      unsubscribe();
      if (port.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
      if (socat.exitCode === null) {
        const exited = new Promise<void>((resolve) => socat.once("exit", () => resolve()));
        socat.kill();
        await exited;
      }
    },
  };
}
