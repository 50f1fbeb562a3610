/**
 * Process entry for one simulated cell:
 *   tsx simulators/sim-cell.ts --config <agent.json>
 * The config is the cell agent's own file plus a "simulation" section {firmware, seed, speed, engine,
 * timecode, cellVariation, resets} (speed: a positive number, or "max" for unpaced; cellVariation: {scale, seed},
 * see world/cell-variation.ts; resets: "self" (default, the world resets itself) or "operator" (each reset
 * waits for a person to confirm the scene, as on a real cell: devices/operator-sim-scene-reset.ts)), which is
 * stripped before the rest goes to compileAgentConfig. Also
 * serves a tiny control channel on 127.0.0.1 (port written to
 * <dataDir>/control.json and, when started by the fleet launcher, sent to it over the IPC channel):
 *   POST /estop          presses the simulated e-stop button (the agent latches estopped)
 *   POST /estop/release  releases the button (the agent stays estopped until reset)
 *   POST /reset          the technician's reset: releases the button and resets the agent's e-stop
 *   POST /scene/wrong    operator mode: the next confirmed scene is set wrong (the simulated operator's error)
 *   GET  /estop, /state  {pressed, state}: the button and the agent's work state
 *   POST /instruments/<kind>/off|on  a simulated instrument fault (mocap, gripper_state, ft_wrist):
 *                        off, every read fails as a dead device's does; on, it answers again
 * Started by the launcher, the process stops when the launcher's IPC channel closes, so a launcher
 * that dies hard does not leave orphaned cells behind.
 */
import { GroundTruthRecorder } from "./sim-ground-truth.js";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { startCellAgent, type CellAgent } from "../cell-agent/agent.js";
import { compileAgentConfig } from "../cell-agent/config.js";
import { createSimulatedCell } from "./sim-cell-hardware.js";
import { SceneReadyGate } from "../cell-agent/devices/scene/scene-ready-gate.js";
import type { SimEstopInput } from "./devices/sim-estop-input.js";
import { SWITCHABLE_INSTRUMENTS, type InstrumentSwitches, type SwitchableInstrument } from "./devices/instrument-switch.js";
import { parseSimEngine, type SimEngine } from "./physics/engine.js";
import { cellVariationFor, compileCellVariationOptions, describeCellVariation, type CellVariationInput, type CellVariationOptions } from "./world/cell-variation.js";

export interface SimulationSection {
  firmware: string;
  seed: number;
  /** Simulated seconds per wall second, or "max". */
  speed: number | "max";
  /** Physics engine; default MuJoCo. */
  engine?: string;
  /** Burn each camera frame's capture time into the picture (simulators/render/timecode.ts); default false. */
  timecode?: boolean;
  /** This cell's variation, drawn from `seed` (the fleet's) and the cell id; default scale 0, none. */
  cellVariation?: CellVariationInput;
  /** "self" (default): the simulated world resets itself; "operator": resets wait for a person's confirmation. */
  resets?: SimResetMode;
  /** Instrument kinds this cell lacks although its environment lists them, e.g. ["mocap"]; default none. */
  without?: string[];
  /** Operator mode: seconds the cell waits for a person's success label before the episode is unlabelled; default 600. */
  labelTimeoutS?: number;
}

/** Who sets the scene before each episode of a simulated cell. */
export type SimResetMode = "self" | "operator";

/** Splits a sim-cell config file into the agent's part and the simulation section. */
export function splitSimConfig(raw: unknown): {
  agent: Record<string, unknown>;
  simulation: { firmware: string; seed: number; speed: number; engine: SimEngine; timecode: boolean; cellVariation: CellVariationOptions; resets: SimResetMode; without: string[]; labelTimeoutMs: number };
} {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new Error(`sim-cell config must be a JSON object; got ${JSON.stringify(raw)}`);
  const { simulation, ...agent } = raw as Record<string, unknown>;
  const sim = (simulation ?? {}) as Partial<SimulationSection>;
  if (typeof sim.firmware !== "string") throw new Error(`sim-cell config "simulation.firmware" must be a string; got ${JSON.stringify(sim.firmware)}`);
  const seed = sim.seed ?? 1;
  if (!Number.isInteger(seed)) throw new Error(`sim-cell config "simulation.seed" must be an integer; got ${JSON.stringify(sim.seed)}`);
  const speed = sim.speed === "max" ? Infinity : sim.speed ?? 1;
  if (typeof speed !== "number" || !(speed > 0)) throw new Error(`sim-cell config "simulation.speed" must be a positive number or "max"; got ${JSON.stringify(sim.speed)}`);
  const engine = parseSimEngine(sim.engine);
  const timecode = sim.timecode ?? false;
  if (typeof timecode !== "boolean") throw new Error(`sim-cell config "simulation.timecode" must be true or false; got ${JSON.stringify(sim.timecode)}`);
  let cellVariation: CellVariationOptions;
  try {
    cellVariation = compileCellVariationOptions(sim.cellVariation);
  } catch (error) {
    throw new Error(`sim-cell config "simulation.cellVariation": ${(error as Error).message}`);
  }
  const resets = sim.resets ?? "self";
  if (resets !== "self" && resets !== "operator") throw new Error(`sim-cell config "simulation.resets" must be "self" or "operator"; got ${JSON.stringify(sim.resets)}`);
  const without = sim.without ?? [];
  if (!Array.isArray(without) || !without.every((k) => typeof k === "string")) throw new Error(`sim-cell config "simulation.without" must be an array of instrument kinds; got ${JSON.stringify(sim.without)}`);
  const labelTimeoutS = sim.labelTimeoutS ?? 600;
  if (typeof labelTimeoutS !== "number" || !(labelTimeoutS > 0)) throw new Error(`sim-cell config "simulation.labelTimeoutS" must be a positive number of seconds; got ${JSON.stringify(sim.labelTimeoutS)}`);
  return { agent, simulation: { firmware: sim.firmware, seed, speed, engine, timecode, cellVariation, resets, without, labelTimeoutMs: labelTimeoutS * 1000 } };
}

/**
 * The control channel; resolves with its port once listening. `agent` is the running agent, or
 * undefined while it starts (then /reset answers 503 and /state reports "starting").
 */
export function startControlServer(
  estop: SimEstopInput, agent: () => CellAgent | undefined = () => undefined, operatorScene?: { misplaceNext(): void }, switches?: InstrumentSwitches, truth?: GroundTruthRecorder,
): Promise<{ server: Server; port: number }> {
  const server = createServer((request, response) => {
    const reply = (status: number, body: object) => response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    const route = `${request.method} ${request.url}`;
    if (route === "GET /metrics") {
      // The agent's Prometheus metrics (control jitter, missed periods, ...), as a real cell serves them on metricsPort.
      const registry = agent()?.metrics;
      if (!registry) return reply(503, { error: "the cell agent is still starting; try again in a moment" });
      void registry.metrics().then((text) => response.writeHead(200, { "content-type": registry.contentType }).end(text));
      return;
    }
    if (route === "GET /ground-truth") {
      // What the world saw of the latest episode, for the simulated operator's label.
      const latest = truth?.latest();
      if (!latest) return reply(404, { error: "no episode has finished on this cell yet" });
      return reply(200, latest);
    }
    if (route === "POST /scene/wrong") {
      if (!operatorScene) return reply(409, { error: "this simulated cell resets itself (simulation.resets \"self\"); only a cell in operator reset mode can have its scene set wrong" });
      operatorScene.misplaceNext();
      return reply(200, { misplace_next: true });
    }
    const fault = /^POST \/instruments\/([a-z_]+)\/(on|off)$/.exec(route);
    if (fault) {
      const kind = fault[1] as SwitchableInstrument;
      if (!switches || !(SWITCHABLE_INSTRUMENTS as readonly string[]).includes(kind)) {
        return reply(404, { error: `no switchable instrument "${kind}"; kinds: ${SWITCHABLE_INSTRUMENTS.join(", ")}` });
      }
      switches.set(kind, fault[2] === "on");
      return reply(200, { instrument: kind, on: switches.isOn(kind), state: agent()?.state() ?? "starting" });
    }
    if (route === "POST /estop") estop.press();
    else if (route === "POST /estop/release") estop.release();
    else if (route === "POST /reset") {
      const running = agent();
      if (!running) return reply(503, { error: "the cell agent is still starting; try again in a moment" });
      estop.release();
      try {
        running.resetEstop();
      } catch (error) {
        return reply(409, { error: (error as Error).message, pressed: estop.isPressed(), state: running.state() });
      }
    } else if (route !== "GET /estop" && route !== "GET /state") {
      return reply(404, { error: `no route ${route}; try POST /estop, POST /estop/release, POST /reset, POST /scene/wrong, POST /instruments/<kind>/off|on, GET /ground-truth, GET /state, GET /metrics` });
    }
    reply(200, { pressed: estop.isPressed(), state: agent()?.state() ?? "starting" });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      resolve({ server, port: typeof address === "object" && address ? address.port : 0 });
    });
  });
}

async function main(argv: string[]): Promise<void> {
  const at = argv.indexOf("--config");
  const path = at >= 0 ? argv[at + 1] : undefined;
  if (!path) throw new Error("usage: tsx simulators/sim-cell.ts --config <agent-config.json>");
  const { agent, simulation } = splitSimConfig(JSON.parse(readFileSync(path, "utf8")));
  const config = compileAgentConfig(agent);
  const variation = cellVariationFor(config.cellId, simulation.cellVariation);
  const sceneGate = simulation.resets === "operator" ? new SceneReadyGate() : undefined;
  if (sceneGate) console.log(`${config.cellId}: operator reset mode: each reset waits for the scene to be confirmed (operator station or POST /scene-ready)`);
  if (variation.scale > 0) console.log(`simulated cell variation of ${config.cellId}: ${describeCellVariation(variation)}`);
  const hardware = await createSimulatedCell({
    model: config.robotModel, firmware: simulation.firmware, environment: config.environment, seed: simulation.seed, speed: simulation.speed, engine: simulation.engine,
    timecode: simulation.timecode, variation, without: simulation.without,
    ...(sceneGate ? { sceneGate, log: (line: string) => console.log(`[cell ${config.cellId}] ${line}`) } : {}),
  });
  mkdirSync(config.dataDir, { recursive: true });
  let running: CellAgent | undefined;
  const truth = new GroundTruthRecorder();
  const control = await startControlServer(hardware.estop, () => running, hardware.operatorScene, hardware.switches, truth);
  writeFileSync(join(config.dataDir, "control.json"), JSON.stringify({ port: control.port, pid: process.pid }));
  process.send?.({ type: "control", port: control.port });
  running = await startCellAgent(config, hardware, {
    // In operator mode a person (the station, or the simulated operator) also judges success when a task asks (operator.success),
    // and performs the run's interventions at the station (the world applies them when the person presses Done).
    ...(sceneGate ? { sceneGate, labels: { timeoutMs: simulation.labelTimeoutMs }, interventions: {}, compileTaskMonitor: truth.compile } : {}),
    // A LeRobot calibration imported into this cell's dataDir reads the emulated servos' ticks.
    ...(hardware.servoWire ? { servoCalibration: hardware.servoWire.calibration } : {}),
  });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    try {
      await running?.stop();
      await hardware.close();
    } catch (error) {
      console.error(`sim-cell ${config.cellId}: error while stopping on ${signal}: ${(error as Error).message}`);
    }
    control.server.close();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("disconnect", () => void stop("launcher gone"));
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).catch((error) => {
    console.error(`sim-cell: ${(error as Error).message}`);
    process.exit(1);
  });
}
