/**
 * `npm run fleet -- <command> [cell]`: drives the simulated cells of a running `npm start`, found
 * through `<ASSAY_DATA_DIR>/fleet.json` (ASSAY_DATA_DIR defaults to ./.assay, as for npm start).
 *
 *   status           every cell with its agent pid, link and work state
 *   estop <cell>     press the cell's simulated e-stop button
 *   reset <cell>     the technician's reset: release the button and reset the agent's e-stop
 *   kill <cell>      kill -9 the agent process; it stays down until restart
 *   restart <cell>   start the agent process again (same data dir: outbox and recordings survive)
 *   unplug <cell>    cut the cell's link to the coordinator
 *   plug <cell>      restore it
 *   instrument <cell> <kind> off|on   a simulated instrument fault (mocap, gripper_state, ft_wrist)
 *
 * Prints one plain-words line per result; exits 1 when npm start is not running, the cell is
 * unknown or the command cannot be done, 2 on a usage error.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { FLEET_COMMANDS, type FleetCommand, type FleetFile } from "../simulators/fleet/fleet-control.js";
import type { SimCellStatus } from "../simulators/fleet/launcher.js";

const USAGE = `usage: npm run fleet -- status | npm run fleet -- <${FLEET_COMMANDS.join("|")}> <cell-id> | npm run fleet -- instrument <cell-id> <mocap|gripper_state|ft_wrist> <off|on>`;
const REQUEST_TIMEOUT_MS = 30_000;

function exit(code: number, message: string): never {
  (code === 0 ? console.log : console.error)(message);
  process.exit(code);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readFleetFile(dataDir: string): FleetFile {
  const path = join(dataDir, "fleet.json");
  const notRunning = `npm start is not running with a simulated fleet for data dir ${dataDir}`;
  if (!existsSync(path)) exit(1, `${notRunning} (no ${path}); start it with "npm start", or set ASSAY_DATA_DIR to the one it uses`);
  let file: FleetFile;
  try {
    file = JSON.parse(readFileSync(path, "utf8")) as FleetFile;
  } catch (error) {
    exit(1, `cannot read ${path}: ${(error as Error).message}`);
  }
  if (!isAlive(file.pid)) exit(1, `${notRunning} (${path} names pid ${file.pid}, which has exited); start it with "npm start"`);
  return file;
}

async function call(file: FleetFile, method: "GET" | "POST", path: string): Promise<{ status: number; body: any }> {
  try {
    const response = await fetch(`${file.controlUrl}${path}`, { method, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    return { status: response.status, body: await response.json() };
  } catch (error) {
    exit(1, `npm start (pid ${file.pid}) does not answer on ${file.controlUrl}: ${(error as Error).message}`);
  }
}

/** The agent's own word on its state, or what is known without it. */
async function workState(cell: SimCellStatus): Promise<string> {
  if (cell.pid === null || !cell.controlUrl) return "down";
  try {
    const response = await fetch(`${cell.controlUrl}/state`, { signal: AbortSignal.timeout(2_000) });
    const body = (await response.json()) as { state: string; pressed: boolean };
    return body.pressed ? `${body.state} (e-stop button pressed)` : body.state;
  } catch {
    return "not answering";
  }
}

async function status(file: FleetFile): Promise<void> {
  const { body } = await call(file, "GET", "/cells");
  const cells = body.cells as SimCellStatus[];
  const width = Math.max(...cells.map((c) => c.cell.length));
  const states = await Promise.all(cells.map(workState));
  console.log(`npm start pid ${file.pid}, ${cells.length} simulated cells`);
  cells.forEach((cell, i) => {
    const pid = cell.pid === null ? "down".padEnd(7) : String(cell.pid).padEnd(7);
    console.log(`  ${cell.cell.padEnd(width)}  pid ${pid}  link ${cell.link.padEnd(9)}  ${states[i]}`);
  });
}

async function main(argv: string[]): Promise<void> {
  const [command, cell, ...rest] = argv;
  const dataDir = resolve(process.env.ASSAY_DATA_DIR || ".assay");
  if (command === "status" && cell === undefined) return status(readFleetFile(dataDir));
  if (!command || command === "help" || command === "--help") exit(command ? 0 : 2, USAGE);
  if (command === "instrument") {
    const [kind, onOff] = rest;
    if (!cell || !kind || (onOff !== "on" && onOff !== "off") || rest.length !== 2) exit(2, `"instrument" takes a cell id, an instrument kind and off or on; ${USAGE}`);
    const file = readFleetFile(dataDir);
    const { status: code, body } = await call(file, "POST", `/cells/${encodeURIComponent(cell)}/instrument/${encodeURIComponent(kind)}/${onOff}`);
    if (code === 404 && Array.isArray(body.cells)) exit(1, `unknown cell "${cell}"; known cells: ${(body.cells as SimCellStatus[]).map((c) => c.cell).join(", ")}`);
    if (code !== 200) exit(1, `instrument ${cell} ${kind} ${onOff} not done: ${body.error ?? `npm start answered ${code}`}`);
    exit(0, body.message);
  }
  if (!FLEET_COMMANDS.includes(command as FleetCommand)) exit(2, `unknown command "${command}"; ${USAGE}`);
  if (!cell || rest.length > 0) exit(2, `"${command}" takes exactly one cell id; ${USAGE}`);
  const file = readFleetFile(dataDir);
  const { status: code, body } = await call(file, "POST", `/cells/${encodeURIComponent(cell)}/${command}`);
  if (code === 404 && Array.isArray(body.cells)) {
    exit(1, `unknown cell "${cell}"; known cells: ${(body.cells as SimCellStatus[]).map((c) => c.cell).join(", ")}`);
  }
  if (code !== 200) exit(1, `${command} ${cell} not done: ${body.error ?? `npm start answered ${code}`}`);
  exit(0, body.message);
}

await main(process.argv.slice(2));
