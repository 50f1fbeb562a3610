/**
 * Launches a simulated fleet: one real cell-agent process per cell (`simulators/sim-cell.ts`),
 * each with its own data dir and agent config, each dialling the coordinator through its own
 * loopback link proxy (its "network cable", see link-proxy.ts). Output lines are prefixed with the
 * cell id.
 *
 * A killed cell stays dead until `restart(cell)`: `kill` is the crash, `restart` is whoever brings
 * the PC back (systemd on a real cell). Keeping them apart lets a test or a trainee look at the
 * fleet while a cell is down. A restart reuses the cell's data dir, so its outbox, recordings and
 * crash marker survive exactly as they would on disk.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { nodeArgsFor } from "../../scripts/compiled-entry.mjs";
import { startLinkProxy, type LinkProxy, type LinkState } from "./link-proxy.js";
import type { SimEngine } from "../physics/engine.js";
import type { SimResetMode } from "../sim-cell.js";

const SIM_CELL_ENTRY = resolve(dirname(fileURLToPath(import.meta.url)), "..", "sim-cell.ts");
const KILL_AFTER_MS = 5000;
/**
 * V8 flags of every simulated cell process. `--no-turbo-inlining`: TurboFan compiles the agent's hot
 * functions without inlining their callees, so a fresh cell spends less of its first episodes compiling
 * (its hot loops are WebAssembly and native code, which the flag does not touch). The sim-cell bench, four
 * rounds alternated with and without it: spawn to the end of the third episode 7.9, 8.3, 9.4, 8.4 CPU-s
 * against 9.2, 8.7, 9.8, 9.2 (0.7 s less a cell, less in every round); warm, 319, 311, 329, 297 ms per
 * simulated second against 330, 304, 314, 312 (the same within the bench's noise). docs/simulation.md.
 */
const SIM_CELL_V8_FLAGS = ["--no-turbo-inlining"];

export interface SimFleetCell {
  cell: string;
  model: string;
  firmware: string;
  environment: string;
  /** This cell's variation scale, overriding the fleet's `cellVariation` (world/cell-variation.ts). */
  cellVariation?: number;
  /** Instrument kinds this cell lacks although its environment lists them (a lab without mocap: ["mocap"]). */
  without?: string[];
}

export interface SimFleetOptions {
  cells: SimFleetCell[];
  /**
   * host:port of the coordinator's CellLink server, or of each coordinator sharing one database
   * (the agents fail over between them in this order).
   */
  coordinatorAddress: string | string[];
  /**
   * With several addresses: each cell starts the list at a different one (the i-th cell at address
   * i mod n), so the cells spread over the coordinators that are up when they connect. Default false:
   * every cell lists them in the given order.
   */
  spread?: boolean;
  /** Enrolls a cell and returns its token; called on every (re)start of the cell's process. */
  enroll: (cellId: string, model: string) => Promise<string> | string;
  /** Parent directory; each cell gets <dataDir>/<cell>/ (agent.json, control.json, agent data). */
  dataDir: string;
  /** Simulated seconds per wall second; Infinity for unpaced. */
  speed: number;
  /** Fleet seed; each cell's world seed is derived from it and the cell's position. */
  seed: number;
  /** Physics engine of every cell's world; default MuJoCo. */
  engine?: SimEngine;
  /** Burn each camera frame's capture time into the pictures (the streams bench measures latency with it). */
  timecode?: boolean;
  /**
   * Per-cell variation scale of every cell (world/cell-variation.ts; 0 or absent: none). Each cell's
   * variation is drawn from the fleet `seed` and its cell id; a cell's own `cellVariation` overrides the scale.
   */
  cellVariation?: number;
  /**
   * Who sets each cell's scene: "self" (default; the simulated world resets itself) or "operator" (each
   * reset waits for a person's confirmation through the operator station, as on a real cell; pair it
   * with a SimOperator (sim-operator.ts) to run unattended).
   */
  resets?: SimResetMode;
  /** Operator reset mode: seconds a cell waits for a person's success label before the episode is unlabelled (default 600). */
  labelTimeoutS?: number;
  /** Receives every output line of every cell as "[cell] line". */
  log?: (line: string) => void;
  /** Called after a cell process started (its control channel is up) or exited. */
  onChange?: () => void;
}

/** One cell as `npm run fleet -- status` shows it. */
export interface SimCellStatus {
  cell: string;
  /** Process id, or null when the process is not running (killed, crashed, stopped). */
  pid: number | null;
  /** The sim-cell's control channel, or null while it is not running. */
  controlUrl: string | null;
  /** The cell's network cable. */
  link: LinkState;
  /** Addresses the agent dials (its link proxies, one per coordinator), comma-separated. */
  linkAddress: string;
}

export interface SimFleet {
  cells(): string[];
  /** SIGTERM to all, waits for exit; SIGKILL whatever is still running after 5 s. Closes the link proxies. */
  stop(): Promise<void>;
  /** SIGKILL one cell (a crash); resolves once it has exited. It stays dead until restart(). */
  kill(cell: string): Promise<void>;
  /** Starts a stopped or killed cell again (enrolling again); kills it first if running. */
  restart(cell: string): Promise<void>;
  /** Cuts the cell's link to the coordinator (every connection, and new ones until plug()). */
  unplug(cell: string): void;
  /** Restores the cell's link; the agent reconnects on its own backoff. */
  plug(cell: string): void;
  /** Presses the cell's simulated e-stop button. */
  estop(cell: string): Promise<void>;
  /** The technician's reset: releases the button and resets the agent's e-stop latch. */
  reset(cell: string): Promise<void>;
  /** Operator reset mode: the next scene the person confirms on this cell is set wrong (objects off target). */
  misplaceNextScene(cell: string): Promise<void>;
  /** A simulated instrument fault: `on: false` makes every read of `kind` fail until switched on again. */
  instrument(cell: string, kind: string, on: boolean): Promise<void>;
  /** Operator reset mode: the simulated world's judgement of the cell's latest episode (the simulated operator's truth). */
  groundTruth(cell: string): Promise<{ success: boolean; progress: number }>;
  /** Running cells' process ids. */
  pids(): Record<string, number>;
  status(): SimCellStatus[];
}

/** A command named a cell this fleet does not have. */
export class UnknownCellError extends Error {}

/** A command that cannot be done in the cell's current state (not running, still e-stopped, ...). */
export class CellStateError extends Error {}

interface Running {
  child: ChildProcess;
  exited: Promise<void>;
  /** Resolves once the cell's control channel is up (or the process is gone). */
  ready: Promise<void>;
  controlPort?: number;
}

export async function launchSimFleet(options: SimFleetOptions): Promise<SimFleet> {
  const byCell = new Map(options.cells.map((c, index) => [c.cell, { ...c, index }]));
  if (byCell.size !== options.cells.length) throw new Error("launchSimFleet: cell ids must be unique");
  const running = new Map<string, Running>();
  /** Each cell's link proxies, one per coordinator address: its "network cable" to each. */
  const proxies = new Map<string, LinkProxy[]>();
  const upstreams = typeof options.coordinatorAddress === "string" ? [options.coordinatorAddress] : options.coordinatorAddress;
  const log = options.log ?? (() => {});
  const changed = () => options.onChange?.();

  const known = (cellId: string) => {
    const cell = byCell.get(cellId);
    if (!cell) throw new UnknownCellError(`cell "${cellId}" is not in this fleet; cells: ${[...byCell.keys()].join(", ")}`);
    return cell;
  };

  const start = async (cellId: string): Promise<Running> => {
    const cell = known(cellId);
    const cellDir = join(options.dataDir, cellId);
    mkdirSync(cellDir, { recursive: true });
    const token = await options.enroll(cellId, cell.model);
    let links = proxies.get(cellId);
    if (!links) {
      const first = options.spread ? cell.index % upstreams.length : 0;
      links = await Promise.all([...upstreams.slice(first), ...upstreams.slice(0, first)].map((upstream) => startLinkProxy(upstream)));
      proxies.set(cellId, links);
    }
    const configPath = join(cellDir, "agent.json");
    const variationScale = cell.cellVariation ?? options.cellVariation ?? 0;
    const config = {
      cellId, coordinatorAddresses: links.map((link) => link.address), cellToken: token, robotModel: cell.model,
      environment: cell.environment, dataDir: join(cellDir, "agent"),
      simulation: { firmware: cell.firmware, seed: options.seed * 1000 + cell.index, speed: Number.isFinite(options.speed) ? options.speed : "max", engine: options.engine, ...(options.timecode ? { timecode: true } : {}),
        ...(variationScale > 0 ? { cellVariation: { scale: variationScale, seed: options.seed } } : {}),
        ...(options.resets === "operator" ? { resets: "operator", ...(options.labelTimeoutS ? { labelTimeoutS: options.labelTimeoutS } : {}) } : {}),
        ...(cell.without?.length ? { without: cell.without } : {}) },
    };
    writeFileSync(configPath, JSON.stringify(config, null, 2));
    // The IPC channel carries the control port back and lets the cell notice a launcher that died.
    // The cell runs as one bundled module (scripts/compiled-entry.mjs): a second of CPU less per start than tsx's loader.
    const child = spawn(process.execPath, [...SIM_CELL_V8_FLAGS, ...(await nodeArgsFor(SIM_CELL_ENTRY, ["--config", configPath], log))], { stdio: ["ignore", "pipe", "pipe", "ipc"] });
    for (const stream of [child.stdout, child.stderr]) {
      if (stream) createInterface({ input: stream }).on("line", (line) => log(`[${cellId}] ${line}`));
    }
    let markReady = () => {};
    const entry: Running = { child, exited: Promise.resolve(), ready: new Promise<void>((done) => (markReady = done)) };
    child.on("message", (message: { type?: string; port?: number }) => {
      if (message?.type !== "control" || typeof message.port !== "number") return;
      entry.controlPort = message.port;
      markReady();
      changed();
    });
    entry.exited = new Promise<void>((done) => {
      child.once("exit", (code, signal) => {
        if (running.get(cellId)?.child === child) running.delete(cellId);
        log(`[${cellId}] exited (${signal ?? `code ${code}`})`);
        markReady();
        changed();
        done();
      });
    });
    child.once("error", (error) => log(`[${cellId}] failed to start: ${error.message}`));
    running.set(cellId, entry);
    return entry;
  };

  const kill = async (cellId: string): Promise<void> => {
    known(cellId);
    const entry = running.get(cellId);
    if (!entry) return;
    entry.child.kill("SIGKILL");
    await entry.exited;
  };

  const controlUrl = (cellId: string): string | null => {
    const port = running.get(cellId)?.controlPort;
    return port === undefined ? null : `http://127.0.0.1:${port}`;
  };

  const control = async (cellId: string, path: string): Promise<void> => {
    known(cellId);
    const url = controlUrl(cellId);
    if (!url) throw new CellStateError(`cell ${cellId} is not running; restart it first`);
    const response = await fetch(`${url}${path}`, { method: "POST" });
    if (!response.ok) {
      const body = (await response.json().catch(() => ({}))) as { error?: string };
      throw new CellStateError(`cell ${cellId}: ${body.error ?? `control channel answered ${response.status}`}`);
    }
  };

  const linksOf = (cellId: string): LinkProxy[] => {
    known(cellId);
    const links = proxies.get(cellId);
    if (!links) throw new CellStateError(`cell ${cellId} has no link yet`);
    return links;
  };

  const started: Running[] = [];
  for (const cell of options.cells) started.push(await start(cell.cell));
  await Promise.all(started.map((entry) => entry.ready));

  return {
    cells: () => [...byCell.keys()],
    pids: () => Object.fromEntries([...running].map(([cell, entry]) => [cell, entry.child.pid ?? -1])),
    status: () =>
      [...byCell.keys()].map((cell) => ({
        cell,
        pid: running.get(cell)?.child.pid ?? null,
        controlUrl: controlUrl(cell),
        link: proxies.get(cell)?.[0]?.state() ?? "plugged",
        linkAddress: proxies.get(cell)?.map((link) => link.address).join(",") ?? "",
      })),
    kill,
    async restart(cellId) {
      await kill(cellId);
      await (await start(cellId)).ready;
    },
    unplug: (cellId) => linksOf(cellId).forEach((link) => link.unplug()),
    plug: (cellId) => linksOf(cellId).forEach((link) => link.plug()),
    estop: (cellId) => control(cellId, "/estop"),
    reset: (cellId) => control(cellId, "/reset"),
    misplaceNextScene: (cellId) => control(cellId, "/scene/wrong"),
    instrument: (cellId, kind, on) => control(cellId, `/instruments/${encodeURIComponent(kind)}/${on ? "on" : "off"}`),
    async groundTruth(cellId) {
      known(cellId);
      const url = controlUrl(cellId);
      if (!url) throw new CellStateError(`cell ${cellId} is not running; restart it first`);
      const response = await fetch(`${url}/ground-truth`);
      const body = (await response.json().catch(() => ({}))) as { success?: boolean; progress?: number; error?: string };
      if (!response.ok || typeof body.success !== "boolean") throw new CellStateError(`cell ${cellId}: ${body.error ?? `control channel answered ${response.status}`}`);
      return { success: body.success, progress: body.progress ?? 0 };
    },
    async stop() {
      const entries = [...running.values()];
      for (const entry of entries) entry.child.kill("SIGTERM");
      const timer = setTimeout(() => entries.forEach((entry) => entry.child.kill("SIGKILL")), KILL_AFTER_MS);
      await Promise.all(entries.map((entry) => entry.exited));
      clearTimeout(timer);
      await Promise.all([...proxies.values()].flat().map((link) => link.close()));
    },
  };
}
