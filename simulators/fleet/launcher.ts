/**
 * Launches a simulated fleet: one real cell-agent process per cell (`simulators/sim-cell.ts`),
 * each with its own data dir and agent config. Output lines are prefixed with the cell id. A child
 * that dies stays dead until `restart(cell)`: crash recovery is for tests to exercise on purpose.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const SIM_CELL_ENTRY = resolve(dirname(fileURLToPath(import.meta.url)), "..", "sim-cell.ts");
const KILL_AFTER_MS = 5000;

export interface SimFleetCell {
  cell: string;
  model: string;
  firmware: string;
  environment: string;
}

export interface SimFleetOptions {
  cells: SimFleetCell[];
  /** host:port of the coordinator's CellLink server. */
  coordinatorAddress: string;
  /** Enrolls a cell and returns its token; called on every (re)start of the cell's process. */
  enroll: (cellId: string, model: string) => Promise<string> | string;
  /** Parent directory; each cell gets <dataDir>/<cell>/ (agent.json, control.json, agent data). */
  dataDir: string;
  /** Simulated seconds per wall second; Infinity for unpaced. */
  speed: number;
  /** Fleet seed; each cell's world seed is derived from it and the cell's position. */
  seed: number;
  /** Receives every output line of every cell as "[cell] line". */
  log?: (line: string) => void;
}

export interface SimFleet {
  cells(): string[];
  /** SIGTERM to all, waits for exit; SIGKILL whatever is still running after 5 s. */
  stop(): Promise<void>;
  /** SIGKILL one cell (a crash); resolves once it has exited. */
  kill(cell: string): Promise<void>;
  /** Starts a stopped or killed cell again (enrolling again); kills it first if running. */
  restart(cell: string): Promise<void>;
  /** Running cells' process ids. */
  pids(): Record<string, number>;
}

interface Running {
  child: ChildProcess;
  exited: Promise<void>;
}

export async function launchSimFleet(options: SimFleetOptions): Promise<SimFleet> {
  const byCell = new Map(options.cells.map((c, index) => [c.cell, { ...c, index }]));
  if (byCell.size !== options.cells.length) throw new Error("launchSimFleet: cell ids must be unique");
  const running = new Map<string, Running>();
  const log = options.log ?? (() => {});

  const start = async (cellId: string): Promise<void> => {
    const cell = byCell.get(cellId);
    if (!cell) throw new Error(`cell "${cellId}" is not in this fleet; cells: ${[...byCell.keys()].join(", ")}`);
    const cellDir = join(options.dataDir, cellId);
    mkdirSync(cellDir, { recursive: true });
    const token = await options.enroll(cellId, cell.model);
    const configPath = join(cellDir, "agent.json");
    const config = {
      cellId, coordinatorAddress: options.coordinatorAddress, cellToken: token, robotModel: cell.model,
      environment: cell.environment, dataDir: join(cellDir, "agent"),
      simulation: { firmware: cell.firmware, seed: options.seed * 1000 + cell.index, speed: Number.isFinite(options.speed) ? options.speed : "max" },
    };
    writeFileSync(configPath, JSON.stringify(config, null, 2));
    const child = spawn(process.execPath, ["--import", "tsx", SIM_CELL_ENTRY, "--config", configPath], { stdio: ["ignore", "pipe", "pipe"] });
    for (const stream of [child.stdout, child.stderr]) {
      if (stream) createInterface({ input: stream }).on("line", (line) => log(`[${cellId}] ${line}`));
    }
    const exited = new Promise<void>((done) => {
      child.once("exit", (code, signal) => {
        if (running.get(cellId)?.child === child) running.delete(cellId);
        log(`[${cellId}] exited (${signal ?? `code ${code}`})`);
        done();
      });
    });
    child.once("error", (error) => log(`[${cellId}] failed to start: ${error.message}`));
    running.set(cellId, { child, exited });
  };

  const kill = async (cellId: string): Promise<void> => {
    const entry = running.get(cellId);
    if (!entry) return;
    entry.child.kill("SIGKILL");
    await entry.exited;
  };

  for (const cell of options.cells) await start(cell.cell);

  return {
    cells: () => [...byCell.keys()],
    pids: () => Object.fromEntries([...running].map(([cell, entry]) => [cell, entry.child.pid ?? -1])),
    kill,
    async restart(cellId) {
      await kill(cellId);
      await start(cellId);
    },
    async stop() {
      const entries = [...running.values()];
      for (const entry of entries) entry.child.kill("SIGTERM");
      const timer = setTimeout(() => entries.forEach((entry) => entry.child.kill("SIGKILL")), KILL_AFTER_MS);
      await Promise.all(entries.map((entry) => entry.exited));
      clearTimeout(timer);
    },
  };
}
