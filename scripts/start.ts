/**
 * `npm start`: the coordinator on an embedded SQLite database plus, unless ASSAY_FLEET=none, a
 * simulated fleet: one cell-agent process per cell in firmware-pins/installations.json, each
 * connected over gRPC on loopback. This is the one place the ASSAY_* environment is read.
 */
import { join } from "node:path";
import { startCoordinator } from "../coordinator/server.js";
import { compileCoordinatorOptions, redactPassword } from "../coordinator/options.js";
import { s3ConnectionFromEnv } from "../coordinator/storage/store-from-url.js";
import { loadFirmwarePins } from "../firmware-pins/pins.js";
import { startFleetControl, type FleetControl } from "../simulators/fleet/fleet-control.js";
import { launchSimFleet, type SimFleet } from "../simulators/fleet/launcher.js";
import { parseSimEngine } from "../simulators/physics/engine.js";

function intFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value)) fail(`${name} must be a whole number; got "${raw}"`);
  return value;
}

function simSpeedFromEnv(): number {
  const raw = process.env.ASSAY_SIM_SPEED ?? "10";
  if (raw === "max") return Number.POSITIVE_INFINITY;
  const value = Number(raw);
  if (!(value > 0)) fail(`ASSAY_SIM_SPEED must be a positive number or "max"; got "${raw}"`);
  return value;
}

/** ASSAY_SIM_CELLS: a comma-separated subset of the installed cells to simulate (default: all). */
function simCellsFromEnv<T extends { cell: string }>(installed: T[]): T[] {
  const raw = process.env.ASSAY_SIM_CELLS;
  if (raw === undefined || raw.trim() === "") return installed;
  const wanted = raw.split(",").map((cell) => cell.trim()).filter(Boolean);
  const unknown = wanted.filter((cell) => !installed.some((i) => i.cell === cell));
  if (unknown.length > 0) fail(`ASSAY_SIM_CELLS names cells that are not installed: ${unknown.join(", ")}; cells: ${installed.map((i) => i.cell).join(", ")}`);
  return installed.filter((i) => wanted.includes(i.cell));
}

/**
 * ASSAY_SIM_WITHOUT: simulated cells that lack instruments their environment lists, as
 * `<cell>:<kind>+<kind>,<cell>:<kind>`, e.g. `so101-b:mocap` (a lab without motion capture).
 */
function withoutFromEnv<T extends { cell: string }>(cells: T[]): Array<T & { without?: string[] }> {
  const raw = process.env.ASSAY_SIM_WITHOUT;
  if (raw === undefined || raw.trim() === "") return cells;
  const without = new Map<string, string[]>();
  for (const part of raw.split(",").map((p) => p.trim()).filter(Boolean)) {
    const match = /^([^:]+):([a-z_]+(?:\+[a-z_]+)*)$/.exec(part);
    if (!match) fail(`ASSAY_SIM_WITHOUT must be "<cell>:<kind>[+<kind>...]" items separated by commas, e.g. "so101-b:mocap"; got "${part}"`);
    if (!cells.some((c) => c.cell === match[1])) fail(`ASSAY_SIM_WITHOUT names cell "${match[1]}", which is not simulated; cells: ${cells.map((c) => c.cell).join(", ")}`);
    without.set(match[1], [...(without.get(match[1]) ?? []), ...match[2].split("+")]);
  }
  return cells.map((c) => (without.has(c.cell) ? { ...c, without: without.get(c.cell) } : c));
}

function fail(message: string): never {
  console.error(`assay: ${message}`);
  process.exit(2);
}

async function main(): Promise<void> {
  const fleetMode = process.env.ASSAY_FLEET ?? "sim";
  if (fleetMode !== "sim" && fleetMode !== "none") fail(`ASSAY_FLEET must be "sim" or "none"; got "${fleetMode}"`);
  let options;
  try {
    options = compileCoordinatorOptions({
      host: process.env.ASSAY_HOST || undefined,
      port: intFromEnv("ASSAY_PORT", 8080),
      grpcPort: intFromEnv("ASSAY_GRPC_PORT", 50051),
      dataDir: process.env.ASSAY_DATA_DIR || undefined,
      // postgres://user:password@host:5432/database: the store on PostgreSQL (several coordinators may share it).
      databaseUrl: process.env.ASSAY_DATABASE_URL || undefined,
      // s3://bucket/prefix keeps recordings, exports and models in a bucket reached with the usual AWS_* variables.
      artifactsUrl: process.env.ASSAY_ARTIFACTS_URL || undefined,
      s3: process.env.ASSAY_ARTIFACTS_URL ? s3ConnectionFromEnv(process.env) : undefined,
      apiKey: process.env.ASSAY_API_KEY || undefined,
      // Behind a load balancer: the URL clients use, for links in results and stream descriptors.
      publicUrl: process.env.ASSAY_PUBLIC_URL || undefined,
      // Where the other coordinators on the database reach this one (live views of the cells it holds).
      internalUrl: process.env.ASSAY_INTERNAL_URL || undefined,
      // Comma-separated STUN/TURN URLs for WebRTC viewers, e.g. "stun:stun.example.org:3478".
      iceServers: (process.env.ASSAY_ICE_SERVERS ?? "").split(",").map((u) => u.trim()).filter(Boolean),
      // A directory of ONNX models a lab mirrors from a model hub: <dir>/<org>/<name>[/<revision>]/model.onnx.
      modelMirror: process.env.ASSAY_MODEL_MIRROR || undefined,
      // The local demo may point webhooks at a receiver on this machine; set ASSAY_WEBHOOKS_ALLOW_LOOPBACK=0 to refuse.
      webhooksAllowLoopback: process.env.ASSAY_WEBHOOKS_ALLOW_LOOPBACK !== "0",
    });
  } catch (error) {
    fail((error as Error).message);
  }
  const simSpeed = simSpeedFromEnv();
  const simSeed = intFromEnv("ASSAY_SIM_SEED", 1);
  let simEngine;
  try {
    simEngine = parseSimEngine(process.env.ASSAY_SIM_ENGINE);
  } catch (error) {
    fail(`ASSAY_SIM_ENGINE: ${(error as Error).message}`);
  }

  const coordinator = await startCoordinator(options).catch((error: Error) => fail(error.message));
  console.log("Assay coordinator");
  console.log(`  base URL      ${coordinator.baseUrl}`);
  console.log(`  artifact URL  ${coordinator.artifactUrl}`);
  console.log(`  streams URL   ${coordinator.streamsUrl}`);
  console.log(`  cell link     ${coordinator.grpcAddress} (gRPC)`);
  console.log(`  data          ${options.dataDir}`);
  console.log(`  store         ${options.databaseUrl ? redactPassword(options.databaseUrl) : "SQLite in the data dir"}`);
  console.log(`  artifacts     ${options.artifactsUrl ?? join(options.dataDir, "artifacts")}`);
  if (coordinator.adminKey) {
    console.log(`  admin key     ${coordinator.adminKey}`);
    console.log("                (shown on this first start only; export it as ASSAY_API_KEY)");
  } else {
    console.log("  admin key     created on first start (set ASSAY_API_KEY to it in your shell)");
  }
  if (coordinator.operatorKey) {
    console.log(`  operator key  ${coordinator.operatorKey}`);
    console.log("                (technicians: kit operations and cell enrollment; shown on this first start only)");
  }

  let fleet: SimFleet | undefined;
  let control: FleetControl | undefined;
  if (fleetMode === "sim") {
    const pins = loadFirmwarePins();
    fleet = await launchSimFleet({
      cells: withoutFromEnv(simCellsFromEnv(pins.installations)),
      coordinatorAddress: coordinator.grpcAddress,
      enroll: (cellId, model) => coordinator.enrollCell(cellId, model),
      dataDir: join(options.dataDir, "cells"),
      speed: simSpeed,
      seed: simSeed,
      engine: simEngine,
      log: (line) => console.log(line),
      onChange: () => control?.refresh(),
    });
    control = await startFleetControl(fleet, join(options.dataDir, "fleet.json"));
    const speedText = Number.isFinite(simSpeed) ? `${simSpeed}x real time` : "maximum speed";
    console.log(`simulated fleet: ${fleet.cells().length} cells (${fleet.cells().join(" ")}) at ${speedText}`);
    console.log(`fleet control   ${control.url} (npm run fleet -- status)`);
  } else {
    console.log("simulated fleet: off (ASSAY_FLEET=none); waiting for real cell agents");
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping cells and coordinator`);
    await control?.close();
    await fleet?.stop();
    await coordinator.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

await main();
