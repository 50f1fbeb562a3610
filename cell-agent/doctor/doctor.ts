/**
 * `cell-agent doctor`: checks a cell PC the way a technician would, and says in plain words what is
 * wrong and what to do. Every check reads the machine through `DoctorProbes`, so the checks run in
 * unit tests with fakes. The result is a list of PASS/WARN/FAIL lines; the cell is ready when none FAILs.
 */
import { dirname } from "node:path";
import { installationOf, loadFirmwarePins, type FirmwarePins } from "../../firmware-pins/pins.js";
import { AGENT_VERSION } from "../agent.js";
import { compileAgentConfig, type AgentConfig } from "../config.js";
import { DISK_FAIL_BYTES, DISK_WARN_BYTES, formatGb } from "../disk-space.js";
import { fail, pass, warn, type CheckResult } from "./check-result.js";
import type { DoctorMotors, DoctorProbes } from "./probes.js";
import { SO101_LEROBOT_MOTORS, type LerobotCalibration } from "../devices/servo/lerobot-calibration.js";

export interface DoctorOptions {
  configPath: string;
  probes: DoctorProbes;
  /** Firmware pins (default: firmware-pins/ beside this checkout). */
  pins?: FirmwarePins;
}

/** Largest wall-clock offset from the coordinator that passes, ms. */
export const CLOCK_OFFSET_WARN_MS = 100;
const SERVICE = "assay-cell-agent";

type Errno = Error & { code?: string | number; details?: string };

/** Plain words for a device that cannot be opened. */
function deviceProblem(name: string, path: string, error: Errno): CheckResult {
  const text = `${error.code ?? ""} ${error.message}`;
  if (/ENOENT|No such file/i.test(text)) {
    return fail(name, `There is no device at ${path}.`, `Check the USB cable and the adapter's power, and that the path is right: ls -l /dev/serial/by-id/ lists the adapters this PC sees.`);
  }
  if (/EACCES|Permission denied/i.test(text)) {
    return fail(name, `The agent's user may not open ${path} (permission denied).`, `Add the assay user to the dialout group: sudo usermod -aG dialout assay, then restart the service: sudo systemctl restart ${SERVICE}.`);
  }
  if (/EBUSY|lock|Resource temporarily unavailable/i.test(text)) {
    return fail(name, `Another program has ${path} open.`, `Stop it first (the agent service holds it while running: sudo systemctl stop ${SERVICE}), then run the doctor again.`);
  }
  return fail(name, `${path} cannot be opened: ${error.message}.`, `Unplug and replug the adapter; if that does not help, check dmesg for USB errors.`);
}

function loadConfig(options: DoctorOptions): { config?: AgentConfig; result: CheckResult } {
  const name = "config file";
  let text: string;
  try {
    text = options.probes.readFile(options.configPath);
  } catch (error) {
    const code = (error as Errno).code;
    if (code === "ENOENT") return { result: fail(name, `There is no config file at ${options.configPath}.`, "Run scripts/install-cell-agent.sh, or pass --config with the right path.") };
    if (code === "EACCES") return { result: fail(name, `This user may not read ${options.configPath} (it holds the cell token, so only root and assay may).`, "Run the doctor with sudo, or as the assay user: sudo -u assay npm run cell-agent -- doctor.") };
    return { result: fail(name, `${options.configPath} cannot be read: ${(error as Error).message}.`) };
  }
  try {
    const config = compileAgentConfig(JSON.parse(text));
    return { config, result: pass(name, `${options.configPath} is valid (cell ${config.cellId}, ${config.robotModel}, ${config.coordinatorAddresses.length > 1 ? "coordinators" : "coordinator"} ${config.coordinatorAddresses.join(", ")}).`) };
  } catch (error) {
    return { result: fail(name, `${options.configPath} is not valid: ${(error as Error).message}.`, "Correct it; every option is described in docs/install-cell-agent.md.") };
  }
}

async function checkMotors(config: AgentConfig, probes: DoctorProbes, out: CheckResult[]): Promise<DoctorMotors | undefined> {
  const motors = config.motors;
  if (!motors) {
    out.push(fail("robot", `The config has no "motors" section, so the agent does not know how to reach the robot.`, "Add it (see docs/install-cell-agent.md, \"motors\")."));
    return undefined;
  }
  if (motors.kind === "ros") {
    try {
      const bus = await probes.openMotors(motors, config.robotModel);
      out.push(pass("rosbridge", `rosbridge at ${motors.options.url} answered and publishes every joint of ${config.robotModel}.`));
      return bus;
    } catch (error) {
      out.push(fail("rosbridge", `The robot cannot be reached through rosbridge at ${motors.options.url}: ${(error as Error).message}.`, "Is the robot on and rosbridge_server running on it (docs/ros-robots.md)? From this PC, is the address reachable?"));
      return undefined;
    }
  }
  // One bus (the SO-101 form): the checks keep their plain names. Several: one pair of lines per bus, then the robot as a whole.
  const several = motors.buses.length > 1;
  let allAnswered = true;
  for (const bus of motors.buses) {
    const suffix = several ? ` (${bus.name})` : "";
    try {
      await probes.openSerial(bus.path);
      out.push(pass(`servo bus device${suffix}`, `${bus.path} exists and can be opened.`));
    } catch (error) {
      out.push(deviceProblem(`servo bus device${suffix}`, bus.path, error as Errno));
      allAnswered = false;
      continue;
    }
    try {
      const opened = await probes.openMotors({ kind: motors.kind, buses: [bus] }, config.robotModel);
      out.push(pass(`servos${suffix}`, `Every servo on ${bus.path}${several ? ` (${bus.joints.join(", ")})` : ""} answered a ping with the model its calibration names.`));
      if (!several) return opened;
      await opened.close();
    } catch (error) {
      const message = (error as Error).message;
      const fix = /model mismatch/.test(message)
        ? "A servo of the wrong type is on the bus or the calibration file names the wrong model: swap the servo or correct the calibration (docs/servo-buses.md)."
        : /calibration/i.test(message)
          ? `Check the calibration file ${bus.calibration} (docs/servo-buses.md, "Calibration file").`
          : `Check servo power (the supply must be on), the bus cable, the baud rate (${bus.baudRate}) and the servo ids (docs/servo-buses.md).`;
      out.push(fail(`servos${suffix}`, `The servos did not all answer as expected: ${message}.`, fix));
      allAnswered = false;
    }
  }
  if (!allAnswered) return undefined;
  try {
    return await probes.openMotors(motors, config.robotModel);
  } catch (error) {
    out.push(fail("servo buses", `Every bus answered on its own, but the robot did not open on all ${motors.buses.length} together: ${(error as Error).message}.`, "Check that no other program holds one of the buses, and try again."));
    return undefined;
  }
}

async function checkFirmware(config: AgentConfig, bus: DoctorMotors, pins: FirmwarePins, out: CheckResult[]): Promise<string | undefined> {
  const name = "firmware";
  let found: string;
  try {
    found = await bus.readFirmware();
  } catch (error) {
    out.push(fail(name, `The robot's firmware version cannot be read: ${(error as Error).message}.`, "Check that every servo is powered, or that the robot's /assay/firmware service runs."));
    return undefined;
  }
  const pinned = installationOf(pins, config.cellId);
  if (!pinned) {
    out.push(fail(name, `The robot reports firmware ${found}, but cell ${config.cellId} is not in firmware-pins/installations.json, so nothing says what it should run.`, "Ask the fleet operator to add this cell to firmware-pins/installations.json."));
  } else if (pinned.model !== config.robotModel) {
    out.push(fail(name, `Cell ${config.cellId} is pinned as a ${pinned.model} but the config says robotModel ${config.robotModel}.`, "Correct robotModel in the config, or have the pin corrected."));
  } else if (pinned.firmware !== found) {
    out.push(fail(name, `The robot reports firmware ${found} but ${pinned.firmware} is pinned for cell ${config.cellId}; the coordinator will give it no work.`, `Flash firmware ${pinned.firmware} (or have the pin in firmware-pins/installations.json changed), then run the doctor again.`));
  } else {
    out.push(pass(name, `The robot reports firmware ${found}, the version pinned for cell ${config.cellId}.`));
  }
  return found;
}

/** Only when a LeRobot calibration was imported: the file, and (bus open) the servos' Homing_Offset against it. */
async function checkLerobot(config: AgentConfig, probes: DoctorProbes, bus: DoctorMotors | undefined, out: CheckResult[]): Promise<void> {
  const name = "LeRobot calibration";
  const importAgain = "Import the arm's current file: cell-agent calibration import-lerobot ~/.cache/huggingface/lerobot/calibration/robots/so101_follower/<id>.json (docs/install-cell-agent.md, \"LeRobot calibration\").";
  let calibration: LerobotCalibration | null;
  try {
    calibration = probes.lerobotCalibration(config.dataDir);
  } catch (error) {
    out.push(fail(name, `The imported LeRobot calibration cannot be used: ${(error as Error).message}.`, importAgain));
    return;
  }
  if (!calibration) return;
  if (!bus?.readHomingOffsetTicks) {
    out.push(pass(name, `A LeRobot calibration is imported; the servos' Homing_Offset registers were not checked against it (the robot was not opened).`));
    return;
  }
  try {
    const offsets = await bus.readHomingOffsetTicks();
    const wrong = SO101_LEROBOT_MOTORS.filter((motor, i) => offsets[i] !== calibration[motor].homing_offset)
      .map((motor) => `${motor} reads ${offsets[SO101_LEROBOT_MOTORS.indexOf(motor)]}, the file says ${calibration[motor].homing_offset}`);
    out.push(wrong.length
      ? fail(name, `The servos' Homing_Offset registers do not match the imported LeRobot calibration (${wrong.join("; ")}); LeRobot policies would be refused.`, `The arm was recalibrated, or the file is another arm's. ${importAgain}`)
      : pass(name, `A LeRobot calibration is imported and every servo's Homing_Offset matches it.`));
  } catch (error) {
    out.push(fail(name, `The servos' Homing_Offset registers cannot be read: ${(error as Error).message}.`, "Check servo power and the bus cable."));
  }
}

async function checkEstop(config: AgentConfig, probes: DoctorProbes, out: CheckResult[]): Promise<void> {
  const name = "e-stop";
  const estop = config.estop;
  if (!estop) {
    out.push(fail(name, `No e-stop input is configured, and the agent will not drive a robot without one.`, `Wire the e-stop to a serial modem line or a GPIO and add the "estop" section (docs/install-cell-agent.md).`));
    return;
  }
  const where = estop.kind === "serial" ? `${estop.line.toUpperCase()} of ${estop.path}` : `GPIO ${estop.chip} line ${estop.line}`;
  if (estop.kind === "serial") {
    try {
      await probes.openSerial(estop.path);
    } catch (error) {
      out.push(deviceProblem(name, estop.path, error as Errno));
      return;
    }
  }
  try {
    const pressed = await probes.readEstop(estop);
    if (pressed) out.push(fail(name, `The e-stop reads PRESSED (${where}); a cut e-stop wire reads the same.`, "Release the e-stop button (twist or pull it out). If it is released, check the e-stop wiring and connector."));
    else out.push(pass(name, `The e-stop input (${where}) is readable and released.`));
  } catch (error) {
    const message = (error as Error).message;
    const fix = estop.kind === "gpio" && /EACCES|permission/i.test(message)
      ? "Add the assay user to the gpio group: sudo usermod -aG gpio assay, then restart the service."
      : "Check the e-stop wiring and the configured line (docs/install-cell-agent.md, \"estop\").";
    out.push(fail(name, `The e-stop input (${where}) cannot be read: ${message}.`, fix));
  }
}

async function checkDeadman(config: AgentConfig, probes: DoctorProbes, out: CheckResult[]): Promise<void> {
  const name = "dead-man output";
  const deadman = config.safety.deadman;
  if (!deadman) {
    const bus = config.motors?.kind === "ros" ? "this ROS robot's controllers" : "a Feetech bus (Dynamixel X servos have their own bus watchdog)";
    out.push(pass(name, `No dead-man output is configured (safety.deadman). If the agent dies, nothing cuts servo power on ${bus}; wire a watchdog relay to a DTR/RTS or GPIO line to have one (docs/safety.md, section 3).`));
    return;
  }
  const where = deadman.kind === "serial" ? `${deadman.line.toUpperCase()} of ${deadman.path}` : `GPIO ${deadman.chip} line ${deadman.line}`;
  if (deadman.kind === "serial") {
    try {
      await probes.openSerial(deadman.path);
    } catch (error) {
      out.push(deviceProblem(name, deadman.path, error as Errno));
      return;
    }
  }
  try {
    await probes.toggleDeadman(deadman);
    out.push(pass(name, `The dead-man output (${where}) toggles every ${deadman.togglePeriodMs} ms; check that the watchdog relay's LED follows it and that servo power drops when the agent stops.`));
  } catch (error) {
    const message = (error as Error).message;
    const fix = deadman.kind === "gpio" && /EACCES|permission/i.test(message)
      ? "Add the assay user to the gpio group: sudo usermod -aG gpio assay, then restart the service."
      : "Check the configured line and the relay wiring (docs/safety.md, section 3).";
    out.push(fail(name, `The dead-man output (${where}) cannot be toggled: ${message}.`, fix));
  }
}

async function checkPolicies(config: AgentConfig, probes: DoctorProbes): Promise<CheckResult> {
  const name = "policies";
  const policies = config.policies;
  const images = policies.images.map((i) => i.image);
  if (policies.runtime === "none") {
    return images.length
      ? warn(name, `Policy containers are off (policies.runtime is "none"), so the images listed in policies.images (${images.join(", ")}) are not run.`, `To run them, set policies.runtime to "container" (docs/install-cell-agent.md, Policies); otherwise remove the list.`)
      : pass(name, `Policy containers are off (policies.runtime is "none"): this cell runs endpoint policies only.`);
  }
  const found = await probes.containerEngine(policies.engine);
  if (found.state === "missing") {
    const which = policies.engine ? `${policies.engine} (policies.engine) is not on PATH` : "docker and podman are not on PATH";
    return fail(name, `No container engine: ${which}; install one (docs/install-cell-agent.md, Policies) or set policies.runtime to none.`,
      policies.engine === "podman" ? "sudo apt-get install podman" : "Install Docker Engine (https://docs.docker.com/engine/install/) or podman (sudo apt-get install podman), then run the doctor again.");
  }
  if (found.state === "silent") {
    const fix = found.engine === "podman"
      ? "Check that podman works for the assay user: sudo -u assay podman version (rootless podman needs subuid/subgid entries for assay)."
      : /permission denied/i.test(found.detail)
        ? `The assay user may not use the Docker daemon: sudo usermod -aG docker assay, then restart the agent: sudo systemctl restart ${SERVICE}.`
        : "Start the Docker daemon: sudo systemctl enable --now docker; sudo -u assay docker version must then answer.";
    return fail(name, `${found.engine} is installed but does not answer: ${found.detail}${/[.?!]$/.test(found.detail) ? "" : "."}`, fix);
  }
  const engine = `${found.engine} ${found.version}`;
  if (images.length === 0) {
    return warn(name, `${engine} answers, but policies.images lists no images, so this cell runs none.`, "List the images this cell may run in policies.images (docs/install-cell-agent.md, Policies).");
  }
  const missing = await probes.missingImages(found.engine, images);
  // The images present, each with its id (what runs, and what resolved_pins.images records) and registry digest.
  const digests = probes.imageDigests ? await probes.imageDigests(found.engine, images) : {};
  const present = images.filter((i) => !missing.includes(i)).map((i) => {
    const d = digests[i];
    return d ? `${i} = ${d.id}${d.repoDigests.length ? ` (${d.repoDigests.join(", ")})` : " (built here, no registry digest)"}` : i;
  });
  if (missing.length) {
    return warn(name, `${engine} answers, but ${missing.length} of ${images.length} configured image(s) are not on this cell (${missing.join(", ")}); the agent never pulls during an episode, so episodes with them would fail to start.${present.length ? ` Present: ${present.join(", ")}.` : ""}`,
      `Pull them now: ${missing.map((i) => `sudo -u assay ${found.engine} pull ${i}`).join("; ")}.`);
  }
  return pass(name, `${engine} answers and has every configured image locally (${present.join(", ")}).`);
}

/** Plain words for a coordinator address that does not answer. */
function unreachableBecause(address: string, error: Errno): string {
  return error.code === "ENOTFOUND" || error.code === "EAI_AGAIN" ? `the name ${address.split(":")[0]} does not resolve`
    : error.code === "ECONNREFUSED" ? "nothing listens there (connection refused)"
    : error.code === "ETIMEDOUT" ? "nothing answered within 5 s; a firewall may drop the traffic"
    : error.message;
}

/**
 * Dials every configured coordinator: PASS when all answer, WARN when some do (the agent fails over
 * to those only), FAIL when none does. Returns the first that answers, for the token and Hello checks.
 */
async function checkReachable(config: AgentConfig, probes: DoctorProbes, out: CheckResult[]): Promise<string | undefined> {
  const name = "coordinator reachable";
  const addresses = config.coordinatorAddresses;
  const answers = await Promise.all(addresses.map((address) => probes.tcpConnect(address).then(
    () => ({ address, why: undefined }),
    (error: Errno) => ({ address, why: unreachableBecause(address, error) }),
  )));
  const reachable = answers.filter((a) => a.why === undefined).map((a) => a.address);
  const unreachable = answers.filter((a) => a.why !== undefined);
  const nc = `from this PC try: ${unreachable.map((u) => `nc -vz ${u.address.replace(":", " ")}`).join("; ")}`;
  if (addresses.length === 1) {
    const why = unreachable[0]?.why;
    out.push(why === undefined
      ? pass(name, `The coordinator at ${addresses[0]} answers on the network.`)
      : fail(name, `The coordinator at ${addresses[0]} cannot be reached: ${why}.`, `Check the coordinator's address in the config ("coordinatorAddresses" or "coordinatorAddress") and the network cable; ${nc}`));
  } else if (unreachable.length === 0) {
    out.push(pass(name, `All ${addresses.length} coordinators answer on the network (${addresses.join(", ")}).`));
  } else if (reachable.length > 0) {
    out.push(warn(name, `${reachable.length} of ${addresses.length} coordinators answer on the network; ${unreachable.map((u) => `${u.address} cannot be reached: ${u.why}`).join("; ")}. The cell works, but fails over only to the coordinators that answer.`,
      `Is the coordinator service running at ${unreachable.map((u) => u.address).join(" and ")}? Check the address in "coordinatorAddresses" and the network; ${nc}`));
  } else {
    out.push(fail(name, `None of the ${addresses.length} coordinators can be reached: ${unreachable.map((u) => `${u.address}: ${u.why}`).join("; ")}.`,
      `Check "coordinatorAddresses" in the config and the network cable; ${nc}`));
  }
  return reachable[0];
}

async function checkCoordinator(config: AgentConfig, probes: DoctorProbes, agent: { state: string } | null, firmware: string | undefined, out: CheckResult[]): Promise<void> {
  const address = await checkReachable(config, probes, out);
  if (!address) {
    out.push(warn("clock offset", "The offset from the coordinator's clock could not be measured without the coordinator."));
    return;
  }
  // With several coordinators (one database), the token and session checks ask the first that answers.
  const at = config.coordinatorAddresses.length > 1 ? ` at ${address}` : "";
  try {
    const token = await probes.checkToken(address, config.cellToken);
    if (!token.accepted) {
      out.push(fail("coordinator token", "The coordinator does not know this cell or its token was revoked; ask for a new enrollment token.",
        `Ask the fleet operator to enroll cell ${config.cellId} again (POST /v1/cells), put the new token in "cellToken" and restart: sudo systemctl restart ${SERVICE}. (The coordinator said: ${token.details})`));
      out.push(warn("clock offset", "The offset from the coordinator's clock could not be measured without an accepted token."));
      return;
    }
    out.push(pass("coordinator token", `The coordinator${at} accepted the token of cell ${config.cellId}.`));
  } catch (error) {
    out.push(fail("coordinator token", `The token could not be checked: ${(error as Errno).details ?? (error as Error).message}.`, `Check that ${address} is the coordinator's cell port (gRPC), not its HTTP API.`));
    return;
  }
  if (agent?.state === "busy") {
    out.push(warn("hello/welcome", "Skipped: the agent service is running an episode, and a second session would interrupt it.", "Run the doctor again when the cell is idle."));
    out.push(warn("clock offset", "Not measured while the agent runs an episode."));
    return;
  }
  try {
    const timing = await probes.helloWelcome(address, config.cellToken, {
      cellId: config.cellId, agentVersion: `${AGENT_VERSION} (doctor)`, robotModel: config.robotModel, firmware: firmware ?? "",
      environment: config.environment, instruments: [], policyImages: [], lastSeqSent: probes.lastSeqSent(config.dataDir),
      interruptedEpisodeId: "",
      // An e-stopped cell is given no work, so the doctor's short session cannot take an episode.
      safetyState: "estopped",
    });
    const rttMs = timing.receivedAtMs - timing.sentAtMs;
    out.push(pass("hello/welcome", `The coordinator${at} welcomed cell ${config.cellId} (round trip ${rttMs} ms).${agent ? " The running agent reconnects by itself." : ""}`));
    const offsetMs = Math.round((timing.sentAtMs + timing.receivedAtMs) / 2 - timing.serverTimeMs);
    const side = offsetMs > 0 ? "ahead of" : "behind";
    if (Math.abs(offsetMs) > CLOCK_OFFSET_WARN_MS) {
      out.push(warn("clock offset", `This PC's clock is ${Math.abs(offsetMs)} ms ${side} the coordinator's (more than ${CLOCK_OFFSET_WARN_MS} ms), so event times in recordings will not line up.`,
        "Install chrony and point it at the same time source as the coordinator: sudo apt-get install chrony; chronyc tracking shows the offset."));
    } else {
      out.push(pass("clock offset", `This PC's clock is within ${Math.max(Math.abs(offsetMs), 1)} ms of the coordinator's (round trip ${rttMs} ms).`));
    }
  } catch (error) {
    const e = error as Errno;
    const details = e.details ?? e.message;
    const fix = /cell_id_mismatch/.test(details) ? `The token belongs to another cell: use the token issued for ${config.cellId}.` : "Run the doctor again; if it keeps failing, send this output to the fleet operator.";
    out.push(fail("hello/welcome", `The coordinator did not welcome the cell: ${details}.`, fix));
  }
}

function checkDisk(config: AgentConfig, probes: DoctorProbes): CheckResult {
  const name = "disk space";
  // Before the first start dataDir may not exist: measure the nearest existing parent.
  let dir = config.dataDir;
  while (!probes.pathExists(dir) && dirname(dir) !== dir) dir = dirname(dir);
  let free: number;
  try {
    free = probes.freeBytes(dir);
  } catch (error) {
    return fail(name, `Free space in ${config.dataDir} cannot be measured: ${(error as Error).message}.`);
  }
  const where = `${config.dataDir}${dir === config.dataDir ? "" : ` (on the disk of ${dir})`}`;
  if (free < DISK_FAIL_BYTES) {
    return fail(name, `Only ${formatGb(free)} is free in ${where}; below 1 GB the cell takes no episodes.`, "Free space on that disk or give the agent a bigger one (dataDir). The agent never deletes recordings the coordinator has not received.");
  }
  if (free < DISK_WARN_BYTES) {
    return warn(name, `${formatGb(free)} is free in ${where}; that is a few hours of recordings, and below 1 GB the cell stops taking episodes.`, "Free space on that disk soon.");
  }
  return pass(name, `${formatGb(free)} is free in ${where}.`);
}

/** Opens every configured camera and reports its size, rate and latency against the config. */
async function checkCameras(config: AgentConfig, probes: DoctorProbes, out: CheckResult[]): Promise<void> {
  for (const camera of config.cameras) {
    const name = `camera ${camera.name}`;
    const source = camera.kind === "v4l2" ? camera.device : camera.kind === "ros" ? camera.rosTopic : camera.url;
    let found;
    try {
      found = await probes.openCamera(camera, { motors: config.motors, robotModel: config.robotModel });
    } catch (error) {
      const message = (error as Error).message;
      const fix = camera.kind === "ros"
        ? `Is the camera driver publishing ${camera.rosTopic} as ${camera.rosType}? On the robot: ros2 topic hz ${camera.rosTopic}.`
        : /Permission denied|EACCES/i.test(message)
        ? `Add the assay user to the video group: sudo usermod -aG video assay, then restart the service: sudo systemctl restart ${SERVICE}.`
        : /No such file|ENOENT|Cannot open video device/i.test(message) || camera.kind === "v4l2" && /exited/.test(message)
          ? "Check the USB cable and that the device path is right: npm run cell-agent -- cameras lists this PC's cameras with their formats and sizes."
          : /busy|EBUSY/i.test(message)
            ? `Another program has the camera open; stop it (the agent service holds it while running: sudo systemctl stop ${SERVICE}).`
            : "Check that the camera is plugged in (or its streamer is running) and run the doctor again.";
      out.push(fail(name, `${source} gave no frame: ${message.slice(0, 400)}.`, fix));
      continue;
    }
    const latency = found.captureLatencyMs !== undefined ? `, capture-to-arrival latency ${found.captureLatencyMs.toFixed(1)} ms (${found.clock?.kind})` : ", frames stamped on arrival";
    const sentence = `${source} gives ${found.width}x${found.height} at ${found.measuredRateHz.toFixed(1)} frames/s; first frame ${found.firstFrameLatencyMs.toFixed(0)} ms after opening${latency}.`;
    const wanted = camera.kind === "v4l2" ? { width: camera.width, height: camera.height } : camera.calibration;
    if (wanted && (found.width !== wanted.width || found.height !== wanted.height)) {
      out.push(warn(name, `${sentence} The config expects ${wanted.width}x${wanted.height}.`, "Pick a size the camera offers (npm run cell-agent -- cameras), and recalibrate if the calibration was made at another size."));
    } else if (found.measuredRateHz < camera.rateHz * 0.8) {
      out.push(warn(name, `${sentence} The agent records at ${camera.rateHz} frames/s, faster than the camera delivers.`, "Lower rateHz, choose mjpeg or a smaller size (USB bandwidth), or give the camera more light (auto exposure lowers the rate in the dark)."));
    } else {
      out.push(pass(name, sentence));
    }
  }
}

/** Runs every check; stops early only when the config itself cannot be used. */
export async function runDoctor(options: DoctorOptions): Promise<CheckResult[]> {
  const { probes } = options;
  const out: CheckResult[] = [];
  const { config, result } = loadConfig(options);
  out.push(result);
  if (!config) return out;
  const pins = options.pins ?? loadFirmwarePins();

  const agent = await probes.localAgentStatus(config.metricsPort);
  let firmware: string | undefined;
  if (agent) {
    out.push(warn("devices", `The agent service is running (state ${agent.state}) and holds the robot and e-stop, so they were not checked.`,
      `To check them too: sudo systemctl stop ${SERVICE}; run the doctor; sudo systemctl start ${SERVICE}.`));
  } else {
    const bus = await checkMotors(config, probes, out);
    if (bus) {
      firmware = await checkFirmware(config, bus, pins, out);
    }
    await checkLerobot(config, probes, bus, out);
    await bus?.close().catch(() => undefined);
    await checkEstop(config, probes, out);
    await checkCameras(config, probes, out);
    await checkDeadman(config, probes, out);
  }
  if (agent) await checkLerobot(config, probes, undefined, out);
  if (config.mocap) {
    try {
      const answer = await probes.pingNatNet(config.mocap.serverAddress);
      out.push(pass("mocap", `The NatNet server "${answer.serverName}" at ${config.mocap.serverAddress} answered in ${answer.rttMs.toFixed(0)} ms.`));
    } catch (error) {
      out.push(fail("mocap", `The NatNet server at ${config.mocap.serverAddress} did not answer: ${(error as Error).message}.`,
        "Is Motive running with streaming on, on the network this PC is on? Are UDP ports 1510 and 1511 open in the firewall?"));
    }
  }
  out.push(await checkPolicies(config, probes));

  const resolutionNs = probes.monotonicResolutionNs();
  out.push(resolutionNs <= 100_000
    ? pass("clock resolution", `The monotonic clock ticks every ${resolutionNs} ns.`)
    : warn("clock resolution", `The monotonic clock ticks only every ${(resolutionNs / 1000).toFixed(0)} µs, too coarse for precise control timing.`, "Use a PC with a high-resolution timer (any x86 PC made this decade); check the clocksource: cat /sys/devices/system/clocksource/clocksource0/current_clocksource."));

  await checkCoordinator(config, probes, agent, firmware, out);
  out.push(checkDisk(config, probes));
  return out;
}
