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
 */
import { pathToFileURL } from "node:url";
import { AGENT_VERSION } from "./agent.js";
import { loadAgentConfig } from "./config.js";
import { describeLerobotCalibration, importLerobotCalibration } from "./lerobot-import.js";
import { exitCodeOf, formatReport } from "./doctor/check-result.js";
import { runDoctor } from "./doctor/doctor.js";
import { realProbes } from "./doctor/probes.js";
import { formatVideoDevices, listVideoDevices } from "./devices/camera/video-devices.js";
import { runUntilSignalled } from "./main.js";

export const DEFAULT_CONFIG_PATH = "/etc/assay/cell-agent.json";

const USAGE = `usage: cell-agent <run|doctor|cameras|version> [--config <path>] [--json]
       cell-agent calibration import-lerobot <file.json> [--config <path>]
  run      start the agent (what the systemd service runs)
  doctor   check this cell PC and say what is wrong
  cameras  list this PC's video devices with their formats, sizes and rates
  version  print the agent version
  calibration import-lerobot
           import an SO-101 follower's LeRobot calibration, for policies in LeRobot units
The config defaults to $ASSAY_CELL_AGENT_CONFIG or ${DEFAULT_CONFIG_PATH}.`;

export interface CliArgs {
  command: "run" | "doctor" | "cameras" | "version" | "help" | "import-lerobot";
  configPath: string;
  json: boolean;
  /** import-lerobot: the LeRobot calibration file. */
  file?: string;
}

/** Parses argv (without node and the script); throws a usage error naming the bad argument. */
export function parseCliArgs(argv: readonly string[], env: NodeJS.ProcessEnv = {}): CliArgs {
  const args: CliArgs = { command: "help", configPath: env.ASSAY_CELL_AGENT_CONFIG || DEFAULT_CONFIG_PATH, json: false };
  const rest = [...argv];
  const command = rest.shift();
  if (command === undefined || command === "help" || command === "--help" || command === "-h") return args;
  if (command === "calibration") {
    const sub = rest.shift();
    if (sub !== "import-lerobot") throw new Error(`unknown calibration command ${JSON.stringify(sub ?? "")}; the one there is: calibration import-lerobot <file.json>\n${USAGE}`);
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
  main(process.argv.slice(2), process.env).then((code) => {
    if (code !== undefined) process.exit(code);
  });
}
