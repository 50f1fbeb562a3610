/**
 * Everything the doctor touches on the machine, behind one interface, so its checks run in unit tests
 * with fakes and on a cell PC with `realProbes()`.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { SerialPort } from "serialport";
import type { Hello } from "../../protocol/gen/cell.js";
import type { AgentConfig, CameraConfig, DeadmanConfig, EstopConfig, MotorsConfig } from "../config.js";
import { WallClock, monotonicResolutionNs } from "../devices/clock/wall-clock.js";
import { freeBytes } from "../disk-space.js";
import { openDeadman, openEstop, openMotors } from "../hardware-factory.js";
import { ContainerEngineCli, findEngine, type EngineName, type ImageDigest } from "../policy/container-engine.js";
import { checkToken, helloWelcome, tcpConnect, type TokenVerdict, type WelcomeTiming } from "./link-probe.js";
import { probeCamera, type CameraProbeResult } from "./camera-probe.js";
import { pingNatNet } from "./natnet-probe.js";
import { loadLerobotCalibration, type LerobotCalibration } from "../devices/servo/lerobot-calibration.js";
import { lerobotCalibrationPath } from "../lerobot-import.js";

/** The opened robot, as far as the doctor needs it. */
export interface DoctorMotors {
  readFirmware(): Promise<string>;
  /** Serial servo buses: each servo's Homing_Offset register in joint order. */
  readHomingOffsetTicks?(): Promise<number[]>;
  close(): Promise<void>;
}

/** What the doctor found of the container engine policy images would run on. */
export type ContainerEngineProbe =
  /** Neither the preferred engine nor (without a preference) docker or podman is on PATH. */
  | { state: "missing" }
  /** Installed, but `<engine> version` failed: the daemon is down or the user may not reach it. */
  | { state: "silent"; engine: EngineName; detail: string }
  | { state: "ready"; engine: EngineName; version: string };

export interface DoctorProbes {
  readFile(path: string): string;
  pathExists(path: string): boolean;
  /** Opens and closes a serial device; rejects with the system error (code ENOENT, EACCES, EBUSY...). */
  openSerial(path: string): Promise<void>;
  /** Opens the configured robot: pings every servo and checks its model, or waits for rosbridge joint states. */
  openMotors(motors: MotorsConfig, robotModel: string): Promise<DoctorMotors>;
  /** True when the e-stop reads pressed. */
  readEstop(estop: EstopConfig): Promise<boolean>;
  /** Opens a configured camera, waits for its first frame and measures its size, rate and latency; rejects with the driver's reason. */
  openCamera(camera: CameraConfig, robot: { motors: MotorsConfig | null; robotModel: string }): Promise<CameraProbeResult>;
  /** Opens the dead-man output, waits for it to change level twice, drives it low and closes it. */
  toggleDeadman(deadman: DeadmanConfig): Promise<void>;
  pingNatNet(serverAddress: string): Promise<{ serverName: string; rttMs: number }>;
  monotonicResolutionNs(): number;
  /** The running agent's GET /status on its loopback port, or null when nothing answers. */
  localAgentStatus(port: number): Promise<{ state: string } | null>;
  tcpConnect(address: string): Promise<void>;
  checkToken(address: string, token: string): Promise<TokenVerdict>;
  helloWelcome(address: string, token: string, hello: Hello): Promise<WelcomeTiming>;
  freeBytes(dir: string): number;
  /** Highest seq this cell's outbox ever wrote (0 when none), for an honest Hello. */
  lastSeqSent(dataDir: string): number;
  /** Finds the container engine (`preferred`, or docker then podman) and asks it `<engine> version`. */
  containerEngine(preferred?: EngineName): Promise<ContainerEngineProbe>;
  /** The images among `images` that `engine` does not have locally (`<engine> image inspect`). */
  missingImages(engine: EngineName, images: readonly string[]): Promise<string[]>;
  /** The images among `images` that `engine` has locally, with their ids and registry digests (absent ones left out). */
  imageDigests?(engine: EngineName, images: readonly string[]): Promise<Record<string, ImageDigest>>;
  /** The LeRobot calibration imported into `dataDir`, null when none is; throws when the file is bad. */
  lerobotCalibration(dataDir: string): LerobotCalibration | null;
}

const TIMEOUT_MS = 5000;

/** Reads `<dataDir>/outbox.jsonl` without opening it for writing (the agent may hold it). */
function outboxLastSeq(dataDir: string): number {
  const path = join(dataDir, "outbox.jsonl");
  if (!existsSync(path)) return 0;
  let last = 0;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    try {
      const parsed = JSON.parse(line) as { seq?: number; next_seq?: number };
      if (typeof parsed.seq === "number") last = Math.max(last, parsed.seq);
      if (typeof parsed.next_seq === "number") last = Math.max(last, parsed.next_seq - 1);
    } catch {
      // blank or torn line
    }
  }
  return last;
}

export function realProbes(): DoctorProbes {
  return {
    readFile: (path) => readFileSync(path, "utf8"),
    pathExists: existsSync,
    lerobotCalibration: (dataDir) => (existsSync(lerobotCalibrationPath(dataDir)) ? loadLerobotCalibration(lerobotCalibrationPath(dataDir)) : null),
    openSerial: (path) =>
      new Promise<void>((resolve, reject) => {
        const port = new SerialPort({ path, baudRate: 9600, autoOpen: false });
        port.open((error) => (error ? reject(error) : port.close(() => resolve())));
      }),
    openMotors: async (motors, robotModel) => (await openMotors(motors, robotModel, new WallClock())).bus,
    readEstop: async (estop) => {
      const input = await openEstop(estop);
      try {
        return input.isPressed();
      } finally {
        await input.close();
      }
    },
    openCamera: (camera, robot) => probeCamera(camera, { robot }),
    toggleDeadman: async (deadman) => {
      const failures: string[] = [];
      const output = await openDeadman(deadman, (line) => failures.push(line));
      let timer: NodeJS.Timeout | undefined;
      try {
        const twice = output.nextToggle().then(() => output.nextToggle());
        const limitMs = Math.max(TIMEOUT_MS, 4 * deadman.togglePeriodMs);
        const late = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(failures[0] ?? `the line did not change level twice within ${limitMs} ms`)), limitMs);
        });
        output.start();
        await Promise.race([twice, late]);
      } finally {
        clearTimeout(timer);
        await output.close();
      }
    },
    pingNatNet: (serverAddress) => pingNatNet(serverAddress, TIMEOUT_MS),
    monotonicResolutionNs: () => monotonicResolutionNs(),
    localAgentStatus: async (port) => {
      try {
        const response = await fetch(`http://127.0.0.1:${port}/status`, { signal: AbortSignal.timeout(1000) });
        return response.ok ? ((await response.json()) as { state: string }) : null;
      } catch {
        return null;
      }
    },
    tcpConnect: (address) => tcpConnect(address, TIMEOUT_MS),
    checkToken: (address, token) => checkToken(address, token, TIMEOUT_MS),
    helloWelcome: (address, token, hello) => helloWelcome(address, token, hello, TIMEOUT_MS),
    freeBytes,
    lastSeqSent: outboxLastSeq,
    containerEngine: async (preferred) => {
      const engine = findEngine(preferred);
      if (!engine) return { state: "missing" };
      try {
        return { state: "ready", engine: engine.name, version: await engine.version(TIMEOUT_MS) };
      } catch (error) {
        return { state: "silent", engine: engine.name, detail: (error as Error).message };
      }
    },
    imageDigests: async (engine, images) => {
      const cli = findEngine(engine) ?? new ContainerEngineCli(engine);
      const found: Record<string, ImageDigest> = {};
      for (const image of images) {
        const digest = await cli.imageDigest(image, TIMEOUT_MS);
        if (digest) found[image] = digest;
      }
      return found;
    },
    missingImages: async (engine, images) => {
      const cli = findEngine(engine) ?? new ContainerEngineCli(engine);
      const missing: string[] = [];
      for (const image of images) if (!(await cli.hasImage(image, TIMEOUT_MS))) missing.push(image);
      return missing;
    },
  };
}
