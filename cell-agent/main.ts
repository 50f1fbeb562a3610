/**
 * The production entry point of a cell PC: real hardware from the config, the agent, its loopback
 * HTTP endpoint (/metrics, /status, /scene-ready, /estop/reset), the disk-full hold, and a clean stop
 * on SIGTERM (systemd stop) or SIGINT.
 */
import { mkdirSync } from "node:fs";
import { Gauge } from "prom-client";
import { startCellAgent, type CellAgent } from "./agent.js";
import type { AgentConfig } from "./config.js";
import { diskFullHold } from "./disk-space.js";
import { buildCellHardware, type BuiltCell } from "./hardware-factory.js";
import { startMetricsServer, type MetricsServer } from "./metrics-server.js";

export interface RunningCell {
  agent: CellAgent;
  metricsPort: number;
  /** Stops the agent (a running episode is interrupted), turns torque off, closes devices and the endpoint. */
  stop(): Promise<void>;
}

export interface RunCellOptions {
  log?: (line: string) => void;
  /** Builds the hardware (default: the real drivers from the config). Tests pass a simulated cell. */
  buildHardware?: (config: AgentConfig, log: (line: string) => void) => Promise<BuiltCell>;
}

/** Servo bus error counters as gauges of the agent's registry, read at scrape time. */
function registerServoCounters(built: BuiltCell, agent: CellAgent): void {
  const bus = built.servoBus;
  if (!bus) return;
  new Gauge({
    name: "assay_agent_servo_bus_counter",
    help: "SerialServoBus counters since the agent started (docs/servo-buses.md, \"Error counters\")",
    labelNames: ["counter"],
    registers: [agent.metrics],
    collect() {
      for (const [counter, value] of Object.entries(bus.counters())) this.set({ counter }, value);
    },
  });
}

export async function runCell(config: AgentConfig, options: RunCellOptions = {}): Promise<RunningCell> {
  const log = options.log ?? ((line: string) => console.log(`[cell ${config.cellId}] ${line}`));
  mkdirSync(config.dataDir, { recursive: true });
  const built = await (options.buildHardware ?? ((c, l) => buildCellHardware(c, { log: l })))(config, log);
  let agent: CellAgent;
  try {
    agent = await startCellAgent(config, built.hardware, {
      log, workHold: diskFullHold(config.dataDir, log), sceneGate: built.sceneGate, ...(config.labels ? { labels: config.labels } : {}),
      interventions: config.interventions,
    });
  } catch (error) {
    await built.hardware.close();
    throw error;
  }
  registerServoCounters(built, agent);
  let server: MetricsServer;
  try {
    server = await startMetricsServer({
      port: config.metricsPort, registry: agent.metrics, cellId: config.cellId, state: () => agent.state(), coordinator: () => agent.coordinator(),
      sceneGate: built.sceneGate, resetEstop: () => agent.resetEstop(),
    });
  } catch (error) {
    await agent.stop();
    await built.hardware.close();
    throw new Error(`cannot serve /metrics on 127.0.0.1:${config.metricsPort}: ${(error as Error).message}; another program uses that port, choose another "metricsPort"`);
  }
  log(`agent started; local endpoint http://127.0.0.1:${server.port} (/metrics, /status, /scene-ready, /estop/reset)`);
  let stopping: Promise<void> | undefined;
  return {
    agent,
    metricsPort: server.port,
    stop() {
      stopping ??= (async () => {
        await agent.stop();
        // Nobody supervises the robot once the agent is gone: leave it with torque off.
        await built.hardware.motors.setTorque(false).catch((error: Error) => log(`torque off at shutdown failed: ${error.message}`));
        await built.hardware.close();
        await server.close();
        log("agent stopped");
      })();
      return stopping;
    },
  };
}

/** Runs until SIGTERM or SIGINT, then stops cleanly and exits 0 (1 if stopping failed). */
export async function runUntilSignalled(config: AgentConfig, options: RunCellOptions = {}): Promise<void> {
  const cell = await runCell(config, options);
  const onSignal = (signal: NodeJS.Signals) => {
    console.log(`[cell ${config.cellId}] ${signal}: stopping`);
    cell.stop().then(
      () => process.exit(0),
      (error: Error) => {
        console.error(`[cell ${config.cellId}] stopping failed: ${error.stack ?? error.message}`);
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
}
