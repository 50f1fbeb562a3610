/**
 * Process entry for one simulated cell:
 *   tsx simulators/sim-cell.ts --config <agent.json>
 * The config is the cell agent's own file plus a "simulation" section {firmware, seed, speed}
 * (speed: a positive number, or "max" for unpaced), which is stripped before the rest goes to
 * compileAgentConfig. Also serves a tiny control channel on 127.0.0.1 (port written to
 * <dataDir>/control.json): POST /estop presses the simulated e-stop, POST /estop/release releases it.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { startCellAgent } from "../cell-agent/agent.js";
import { compileAgentConfig } from "../cell-agent/config.js";
import { createSimulatedCell } from "./sim-cell-hardware.js";
import type { SimEstopInput } from "./devices/sim-estop-input.js";

export interface SimulationSection {
  firmware: string;
  seed: number;
  /** Simulated seconds per wall second, or "max". */
  speed: number | "max";
}

/** Splits a sim-cell config file into the agent's part and the simulation section. */
export function splitSimConfig(raw: unknown): { agent: Record<string, unknown>; simulation: { firmware: string; seed: number; speed: number } } {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new Error(`sim-cell config must be a JSON object; got ${JSON.stringify(raw)}`);
  const { simulation, ...agent } = raw as Record<string, unknown>;
  const sim = (simulation ?? {}) as Partial<SimulationSection>;
  if (typeof sim.firmware !== "string") throw new Error(`sim-cell config "simulation.firmware" must be a string; got ${JSON.stringify(sim.firmware)}`);
  const seed = sim.seed ?? 1;
  if (!Number.isInteger(seed)) throw new Error(`sim-cell config "simulation.seed" must be an integer; got ${JSON.stringify(sim.seed)}`);
  const speed = sim.speed === "max" ? Infinity : sim.speed ?? 1;
  if (typeof speed !== "number" || !(speed > 0)) throw new Error(`sim-cell config "simulation.speed" must be a positive number or "max"; got ${JSON.stringify(sim.speed)}`);
  return { agent, simulation: { firmware: sim.firmware, seed, speed } };
}

/** The e-stop control channel; resolves with its port once listening. */
export function startControlServer(estop: SimEstopInput): Promise<{ server: Server; port: number }> {
  const server = createServer((request, response) => {
    const route = `${request.method} ${request.url}`;
    if (route === "POST /estop") estop.press();
    else if (route === "POST /estop/release") estop.release();
    else if (route !== "GET /estop") {
      response.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: `no route ${route}; try POST /estop, POST /estop/release` }));
      return;
    }
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ pressed: estop.isPressed() }));
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
  const hardware = createSimulatedCell({
    model: config.robotModel, firmware: simulation.firmware, environment: config.environment, seed: simulation.seed, speed: simulation.speed,
  });
  mkdirSync(config.dataDir, { recursive: true });
  const control = await startControlServer(hardware.estop);
  writeFileSync(join(config.dataDir, "control.json"), JSON.stringify({ port: control.port, pid: process.pid }));
  const running = await startCellAgent(config, hardware);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    try {
      await running.stop();
      await hardware.close();
    } catch (error) {
      console.error(`sim-cell ${config.cellId}: error while stopping on ${signal}: ${(error as Error).message}`);
    }
    control.server.close();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).catch((error) => {
    console.error(`sim-cell: ${(error as Error).message}`);
    process.exit(1);
  });
}
