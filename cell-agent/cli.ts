/**
 * `cell-agent <run|doctor|cameras|version|calibration> [--config <path>]` (npm run cell-agent -- ...). The config path
 * defaults to $ASSAY_CELL_AGENT_CONFIG, then /etc/assay/cell-agent.json.
 *
 *   run      start the agent with the real hardware; stops cleanly on SIGTERM (systemctl stop)
 *   doctor   check devices, cameras, firmware, clock, the coordinator link and disk; exit 0 when nothing FAILs
 *            (--json prints the results as JSON)
 *   cameras  list this PC's video devices with their formats, sizes and rates (--json); needs no config
 *   version  print the agent version
 *   calibration import-lerobot <file.json>
 *            check an SO-101 follower's LeRobot calibration file and keep it in the agent's dataDir
 *            (docs/install-cell-agent.md, "LeRobot calibration")
 *   calibration camera <name> --board <cols>x<rows> --square-mm <mm> [--views N] [--from <dir>] [--write]
 *            checkerboard calibration of a configured camera (docs/install-cell-agent.md, "Camera calibration")
 */
import { pathToFileURL } from "node:url";
import { AGENT_VERSION } from "./agent.js";
import { loadAgentConfig } from "./config.js";
import { describeLerobotCalibration, importLerobotCalibration } from "./lerobot-import.js";
import { calibrateFromFrames, calibrationBlock, describeResult, framesFromDir, framesFromTerminal, parseBoardSize, writeCalibrationToConfig, type CameraCalibrationRequest } from "./calibration/camera-calibration-command.js";
import { MAX_VIEWS, MIN_VIEWS } from "./calibration/calibrate-camera.js";
import { WallClock } from "./devices/clock/wall-clock.js";
import { RosMotorBus } from "./devices/ros/ros-motor-bus.js";
import { openCamera, openMotors } from "./hardware-factory.js";
import { exitCodeOf, formatReport } from "./doctor/check-result.js";
import { runDoctor } from "./doctor/doctor.js";
import { realProbes } from "./doctor/probes.js";
import { formatVideoDevices, listVideoDevices } from "./devices/camera/video-devices.js";
import { runUntilSignalled } from "./main.js";

export const DEFAULT_CONFIG_PATH = "/etc/assay/cell-agent.json";

const USAGE = `usage: cell-agent <run|doctor|cameras|version> [--config <path>] [--json]
       cell-agent calibration import-lerobot <file.json> [--config <path>]
       cell-agent calibration camera <name> --board <cols>x<rows> --square-mm <mm> [--views N] [--from <dir>] [--write] [--config <path>]
  run      start the agent (what the systemd service runs)
  doctor   check this cell PC and say what is wrong
  cameras  list this PC's video devices with their formats, sizes and rates
  version  print the agent version
  calibration import-lerobot
           import an SO-101 follower's LeRobot calibration, for policies in LeRobot units
  calibration camera
           checkerboard calibration of a configured camera (--board counts inner corners); prints the
           camera's calibration block, --write puts it into the config
The config defaults to $ASSAY_CELL_AGENT_CONFIG or ${DEFAULT_CONFIG_PATH}.`;

export interface CliArgs {
  command: "run" | "doctor" | "cameras" | "version" | "help" | "import-lerobot" | "calibrate-camera";
  configPath: string;
  json: boolean;
  /** import-lerobot: the LeRobot calibration file. */
  file?: string;
  /** calibration camera: what to calibrate and how. */
  cameraCalibration?: CameraCalibrationRequest;
}

/** Parses argv (without node and the script); throws a usage error naming the bad argument. */
export function parseCliArgs(argv: readonly string[], env: NodeJS.ProcessEnv = {}): CliArgs {
  const args: CliArgs = { command: "help", configPath: env.ASSAY_CELL_AGENT_CONFIG || DEFAULT_CONFIG_PATH, json: false };
  const rest = [...argv];
  const command = rest.shift();
  if (command === undefined || command === "help" || command === "--help" || command === "-h") return args;
  if (command === "calibration") {
    const sub = rest.shift();
    if (sub === "camera") return parseCameraCalibrationArgs(rest, args);
    if (sub !== "import-lerobot") throw new Error(`unknown calibration command ${JSON.stringify(sub ?? "")}; the ones there are: calibration import-lerobot <file.json>, calibration camera <name>\n${USAGE}`);
    args.command = "import-lerobot";
  } else if (command === "run" || command === "doctor" || command === "cameras" || command === "version") {
    args.command = command;
  } else {
    throw new Error(`unknown command ${JSON.stringify(command)}\n${USAGE}`);
  }
  while (rest.length) {
    const arg = rest.shift()!;
    if (arg === "--config") {
      const value = rest.shift();
      if (!value) throw new Error(`--config needs a path\n${USAGE}`);
      args.configPath = value;
    } else if (arg.startsWith("--config=")) {
      args.configPath = arg.slice("--config=".length);
    } else if (arg === "--json" && (command === "doctor" || command === "cameras")) {
      args.json = true;
    } else if (args.command === "import-lerobot" && args.file === undefined && !arg.startsWith("--")) {
      args.file = arg;
    } else {
      throw new Error(`unknown argument ${JSON.stringify(arg)}\n${USAGE}`);
    }
  }
  if (args.command === "import-lerobot" && args.file === undefined) throw new Error(`calibration import-lerobot needs the LeRobot calibration file, e.g. ~/.cache/huggingface/lerobot/calibration/robots/so101_follower/<id>.json\n${USAGE}`);
  return args;
}

function parseCameraCalibrationArgs(rest: string[], args: CliArgs): CliArgs {
  let camera: string | undefined, board: CameraCalibrationRequest["board"] | undefined, squareMm: number | undefined, views = 15, fromDir: string | undefined, write = false;
  const value = (flag: string) => {
    const v = rest.shift();
    if (v === undefined || v.startsWith("--")) throw new Error(`${flag} needs a value\n${USAGE}`);
    return v;
  };
  while (rest.length) {
    const arg = rest.shift()!;
    if (arg === "--config") args.configPath = value(arg);
    else if (arg === "--board") board = parseBoardSize(value(arg));
    else if (arg === "--square-mm") {
      const text = value(arg);
      squareMm = Number(text);
      if (!(squareMm > 0 && squareMm <= 1000)) throw new Error(`--square-mm must be the side of one square in millimetres, above 0 and at most 1000; got ${JSON.stringify(text.slice(0, 40))}`);
    } else if (arg === "--views") {
      const text = value(arg);
      views = Number(text);
      if (!Number.isInteger(views) || views < MIN_VIEWS || views > MAX_VIEWS) throw new Error(`--views must be a whole number from ${MIN_VIEWS} to ${MAX_VIEWS}; got ${JSON.stringify(text.slice(0, 40))}`);
    } else if (arg === "--from") fromDir = value(arg);
    else if (arg === "--write") write = true;
    else if (camera === undefined && !arg.startsWith("--")) camera = arg;
    else throw new Error(`unknown argument ${JSON.stringify(arg.slice(0, 80))}\n${USAGE}`);
  }
  if (camera === undefined) throw new Error(`calibration camera needs the camera's name from the config's "cameras", e.g. calibration camera top --board 9x6 --square-mm 24\n${USAGE}`);
  if (!board) throw new Error(`calibration camera needs --board <cols>x<rows>, the board's inner corners (9x6 for a board of 10 x 7 squares)\n${USAGE}`);
  if (squareMm === undefined) throw new Error(`calibration camera needs --square-mm, the measured side of one square in millimetres\n${USAGE}`);
  args.command = "calibrate-camera";
  args.cameraCalibration = { camera, board, squareMm, views, ...(fromDir !== undefined ? { fromDir } : {}), write };
  return args;
}

async function runCameraCalibration(configPath: string, request: CameraCalibrationRequest): Promise<number> {
  try {
    const config = loadAgentConfig(configPath);
    const camera = config.cameras.find((c) => c.name === request.camera);
    if (!camera) throw new Error(`the config ${configPath} has no camera ${JSON.stringify(request.camera)}; its cameras: ${config.cameras.map((c) => c.name).join(", ") || "none"}`);
    const log = (line: string) => console.log(line);
    let frames;
    if (request.fromDir !== undefined) {
      frames = framesFromDir(request.fromDir);
    } else {
      const clock = new WallClock();
      let rosBus: RosMotorBus | undefined;
      if (camera.kind === "ros" && config.motors) {
        const { bus } = await openMotors(config.motors, config.robotModel, clock);
        if (bus instanceof RosMotorBus) rosBus = bus;
        else await bus.close();
      }
      const device = openCamera(camera, clock, undefined, rosBus);
      try {
        frames = await framesFromTerminal(async () => (await device.capture()).jpeg, request, process.stdin, log);
      } finally {
        device.close?.();
        await rosBus?.close();
      }
    }
    const result = calibrateFromFrames(frames, request, log);
    const block = calibrationBlock(result, camera.calibration);
    console.log([...describeResult(result), `calibration block for camera ${JSON.stringify(camera.name)} (its "calibration" in ${configPath}):`, JSON.stringify(block, null, 2)].join("\n"));
    if (block.extrinsics.parent_frame === "uncalibrated") console.log(`the extrinsics are a placeholder (parent_frame "uncalibrated"): put the camera's pose from a hand-eye calibration there`);
    if (request.write) {
      writeCalibrationToConfig(configPath, camera.name, block);
      console.log(`wrote the calibration of camera ${JSON.stringify(camera.name)} into ${configPath}; restart the agent to use it`);
    }
    return 0;
  } catch (error) {
    console.error(`cannot calibrate the camera: ${(error as Error).message}`);
    return 1;
  }
}

export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number | undefined> {
  let args: CliArgs;
  try {
    args = parseCliArgs(argv, env);
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }
  switch (args.command) {
    case "help":
      console.log(USAGE);
      return 0;
    case "version":
      console.log(AGENT_VERSION);
      return 0;
    case "doctor": {
      const results = await runDoctor({ configPath: args.configPath, probes: realProbes() });
      console.log(args.json ? JSON.stringify(results, null, 2) : formatReport(results));
      return exitCodeOf(results);
    }
    case "cameras": {
      const devices = await listVideoDevices();
      console.log(args.json ? JSON.stringify(devices, null, 2) : formatVideoDevices(devices));
      return 0;
    }
    case "import-lerobot": {
      try {
        const config = loadAgentConfig(args.configPath);
        if (config.robotModel !== "so101") throw new Error(`LeRobot calibrations are for an SO-101 follower; this cell's robotModel is ${JSON.stringify(config.robotModel)}`);
        const { path, calibration } = importLerobotCalibration(args.file!, config.dataDir);
        console.log([`imported the LeRobot calibration ${args.file} to ${path}:`, ...describeLerobotCalibration(calibration)].join("\n"));
        return 0;
      } catch (error) {
        console.error(`cannot import the LeRobot calibration: ${(error as Error).message}`);
        return 1;
      }
    }
    case "calibrate-camera":
      return runCameraCalibration(args.configPath, args.cameraCalibration!);
    case "run": {
      try {
        const config = loadAgentConfig(args.configPath);
        await runUntilSignalled(config);
      } catch (error) {
        console.error(`the cell agent could not start: ${(error as Error).message}\nrun "npm run cell-agent -- doctor --config ${args.configPath}" to see what is wrong`);
        return 1;
      }
      return undefined; // keeps running until a signal
    }
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  void main(process.argv.slice(2), process.env).then((code) => {
    if (code !== undefined) process.exit(code);
  });
}
