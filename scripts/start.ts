/**
 * `npm start`: the coordinator on an embedded SQLite database (or, with ASSAY_DATABASE_URL=embedded,
 * an embedded PostgreSQL in the data dir that several coordinators share) plus, unless
 * ASSAY_FLEET=none, a simulated fleet: one cell-agent process per cell in
 * firmware-pins/installations.json, each connected over gRPC on loopback to this coordinator or to
 * the coordinators ASSAY_SIM_COORDINATORS lists. This is the one place the ASSAY_* environment is read.
 */
import { join } from "node:path";
import { startCoordinator } from "../coordinator/server.js";
import { compileCoordinatorOptions, redactPassword } from "../coordinator/options.js";
import { s3ConnectionFromEnv } from "../coordinator/storage/store-from-url.js";
import { loadFirmwarePins } from "../firmware-pins/pins.js";
import { startFleetControl, type FleetControl } from "../simulators/fleet/fleet-control.js";
import { launchSimFleet, type SimFleet } from "../simulators/fleet/launcher.js";
import { SimOperator } from "../simulators/fleet/sim-operator.js";
import { SimJudge } from "../simulators/judge/sim-judge.js";
import type { SimResetMode } from "../simulators/sim-cell.js";
import { createApiKey } from "../coordinator/auth/api-keys.js";
import { CATALOG_ACCOUNT_ID } from "../coordinator/tasks/task-catalog.js";
import { revokeKey } from "../coordinator/store/keys-repo.js";
import { openEmbeddedPostgres, type EmbeddedPostgres } from "../coordinator/store/postgres/embedded-cluster.js";
import { parseSimEngine } from "../simulators/physics/engine.js";
import { MAX_CELL_VARIATION_SCALE, compileCellVariationOptions } from "../simulators/world/cell-variation.js";

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

/** ASSAY_SIM_CELL_VARIATION: the simulated cells' per-cell variation scale, 0 (default: none) to MAX_CELL_VARIATION_SCALE. */
function simCellVariationFromEnv(): number {
  const raw = process.env.ASSAY_SIM_CELL_VARIATION;
  if (raw === undefined || raw.trim() === "") return 0;
  try {
    return compileCellVariationOptions(Number(raw)).scale;
  } catch {
    fail(`ASSAY_SIM_CELL_VARIATION must be a number from 0 (off) to ${MAX_CELL_VARIATION_SCALE}; got "${raw}"`);
  }
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
 * ASSAY_SIM_RESETS: "self" (default: the simulated world resets itself) or "operator" (each reset waits
 * for the operator station, as on a real cell). ASSAY_SIM_OPERATOR: "on" (default in operator mode: the
 * simulated operator confirms resets through the station API, so `npm start` still runs unattended) or
 * "off" (a person confirms them in the console's Station page). ASSAY_SIM_OPERATOR_ERROR_RATE: the share
 * of scenes the simulated operator sets wrong and then marks invalid, and of success labels it gets wrong
 * (default 0.05).
 */
function simResetsFromEnv(): { resets: SimResetMode; simulatedOperator: boolean; errorRate: number } {
  const resets = process.env.ASSAY_SIM_RESETS || "self";
  if (resets !== "self" && resets !== "operator") fail(`ASSAY_SIM_RESETS must be "self" or "operator"; got "${resets}"`);
  const operator = process.env.ASSAY_SIM_OPERATOR || "on";
  if (operator !== "on" && operator !== "off") fail(`ASSAY_SIM_OPERATOR must be "on" or "off"; got "${operator}"`);
  const rawRate = process.env.ASSAY_SIM_OPERATOR_ERROR_RATE;
  const errorRate = rawRate === undefined || rawRate === "" ? 0.05 : Number(rawRate);
  if (!(errorRate >= 0 && errorRate <= 1)) fail(`ASSAY_SIM_OPERATOR_ERROR_RATE must be a share from 0 to 1; got "${rawRate}"`);
  return { resets, simulatedOperator: resets === "operator" && operator === "on", errorRate };
}

/**
 * ASSAY_SIM_JUDGE: "off" (default) or "on": a simulated judge endpoint (simulators/judge/sim-judge.ts)
 * answers from the simulated world's truth, for runs that name it as `judge.url` (docs/judges.md).
 * ASSAY_SIM_JUDGE_PORT: its loopback port (default 9480). ASSAY_SIM_JUDGE_ERROR_RATE: the share of its
 * verdicts that are wrong (default 0.1).
 */
function simJudgeFromEnv(): { port: number; errorRate: number } | null {
  const mode = process.env.ASSAY_SIM_JUDGE || "off";
  if (mode !== "on" && mode !== "off") fail(`ASSAY_SIM_JUDGE must be "on" or "off"; got "${mode}"`);
  if (mode === "off") return null;
  const port = intFromEnv("ASSAY_SIM_JUDGE_PORT", 9480);
  if (!(port >= 1 && port <= 65535)) fail(`ASSAY_SIM_JUDGE_PORT must be a port from 1 to 65535; got "${process.env.ASSAY_SIM_JUDGE_PORT}"`);
  const rawRate = process.env.ASSAY_SIM_JUDGE_ERROR_RATE;
  const errorRate = rawRate === undefined || rawRate === "" ? 0.1 : Number(rawRate);
  if (!(errorRate >= 0 && errorRate <= 1)) fail(`ASSAY_SIM_JUDGE_ERROR_RATE must be a share from 0 to 1; got "${rawRate}"`);
  return { port, errorRate };
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

/**
 * ASSAY_SIM_COORDINATORS: the CellLink addresses (host:port, comma-separated) the simulated cells
 * list, for several coordinators on one database; default this coordinator's own. Each cell starts
 * the list at a different address, so the cells spread over the coordinators running when they connect.
 */
function simCoordinatorsFromEnv(): string[] | undefined {
  const raw = process.env.ASSAY_SIM_COORDINATORS;
  if (raw === undefined || raw.trim() === "") return undefined;
  const addresses = raw.split(",").map((a) => a.trim()).filter(Boolean);
  for (const address of addresses) {
    const match = /^(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(address);
    if (!match || Number(match[1]) < 1 || Number(match[1]) > 65535) {
      fail(`ASSAY_SIM_COORDINATORS must be CellLink addresses "host:port" separated by commas, e.g. "127.0.0.1:50051,127.0.0.1:50052"; got "${address.slice(0, 100)}"`);
    }
  }
  return addresses;
}

function fail(message: string): never {
  console.error(`assay: ${message}`);
  process.exit(2);
}

async function main(): Promise<void> {
  const fleetMode = process.env.ASSAY_FLEET ?? "sim";
  if (fleetMode !== "sim" && fleetMode !== "none") fail(`ASSAY_FLEET must be "sim" or "none"; got "${fleetMode}"`);
  // "embedded": a PostgreSQL kept in the data dir, started by the first coordinator and joined by the others.
  const embeddedDatabase = process.env.ASSAY_DATABASE_URL === "embedded";
  let options;
  try {
    options = compileCoordinatorOptions({
      host: process.env.ASSAY_HOST || undefined,
      port: intFromEnv("ASSAY_PORT", 8080),
      grpcPort: intFromEnv("ASSAY_GRPC_PORT", 50051),
      dataDir: process.env.ASSAY_DATA_DIR || undefined,
      // postgres://user:password@host:5432/database: the store on PostgreSQL (several coordinators may share it);
      // "embedded" (above) starts or joins one kept in the data dir.
      databaseUrl: (!embeddedDatabase && process.env.ASSAY_DATABASE_URL) || undefined,
      // Connections to PostgreSQL (each transaction holds one while it runs); default 10.
      databasePoolSize: process.env.ASSAY_DATABASE_POOL_SIZE ? intFromEnv("ASSAY_DATABASE_POOL_SIZE", 10) : undefined,
      // 1: count the store's statements on /metrics (assay_store_statements_total); off by default.
      storeStatementMetrics: process.env.ASSAY_STORE_STATEMENT_METRICS === "1",
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
      // Behind a reverse proxy: its addresses or CIDR ranges, comma-separated; their X-Forwarded-For names the client (per-client limits).
      trustedProxies: (process.env.ASSAY_TRUSTED_PROXIES ?? "").split(",").map((p) => p.trim()).filter(Boolean),
      // The local demo may point webhooks at a receiver on this machine; set ASSAY_WEBHOOKS_ALLOW_LOOPBACK=0 to refuse.
      webhooksAllowLoopback: process.env.ASSAY_WEBHOOKS_ALLOW_LOOPBACK !== "0",
      // Seconds a cell waits on a person before cell.attention_needed pages the operator account (default 120).
      attentionPageMs: intFromEnv("ASSAY_ATTENTION_PAGE_S", 120) * 1000,
      // Seconds a run whose episodes have all finished waits for recordings its cells have not uploaded (default 6 h).
      recordingWaitMs: intFromEnv("ASSAY_RECORDING_WAIT_S", 6 * 3600) * 1000,
    });
  } catch (error) {
    fail((error as Error).message);
  }
  const simSpeed = simSpeedFromEnv();
  const simSeed = intFromEnv("ASSAY_SIM_SEED", 1);
  const simCellVariation = simCellVariationFromEnv();
  const simResets = simResetsFromEnv();
  const simJudgeSettings = simJudgeFromEnv();
  const simCoordinators = simCoordinatorsFromEnv();
  let simEngine;
  try {
    simEngine = parseSimEngine(process.env.ASSAY_SIM_ENGINE);
  } catch (error) {
    fail(`ASSAY_SIM_ENGINE: ${(error as Error).message}`);
  }

  let embedded: EmbeddedPostgres | undefined;
  if (embeddedDatabase) {
    embedded = await openEmbeddedPostgres({ dataDir: options.dataDir, log: (line) => console.log(line) })
      .catch((error: Error) => fail(`ASSAY_DATABASE_URL=embedded: ${error.message}`));
    options = { ...options, databaseUrl: embedded.url };
  }
  // Until this coordinator has connected, no other process may stop the embedded server.
  const coordinator = await startCoordinator(options).catch((error: Error) => fail(error.message)).finally(() => embedded?.releaseStartLock());
  console.log("Assay coordinator");
  console.log(`  base URL      ${coordinator.baseUrl}`);
  console.log(`  artifact URL  ${coordinator.artifactUrl}`);
  console.log(`  streams URL   ${coordinator.streamsUrl}`);
  console.log(`  cell link     ${coordinator.grpcAddress} (gRPC)`);
  console.log(`  data          ${options.dataDir}`);
  console.log(`  store         ${embedded ? `embedded PostgreSQL on 127.0.0.1:${embedded.port}, in ${embedded.dir} (${embedded.started ? "started by this coordinator" : "joined"})` : options.databaseUrl ? redactPassword(options.databaseUrl) : "SQLite in the data dir"}`);
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
  let simOperator: SimOperator | undefined;
  let simOperatorKeyId: string | undefined;
  let simJudge: SimJudge | undefined;
  if (fleetMode === "sim") {
    const pins = loadFirmwarePins();
    fleet = await launchSimFleet({
      cells: withoutFromEnv(simCellsFromEnv(pins.installations)),
      coordinatorAddress: simCoordinators ?? coordinator.grpcAddress,
      spread: true,
      enroll: (cellId, model) => coordinator.enrollCell(cellId, model),
      dataDir: join(options.dataDir, "cells"),
      speed: simSpeed,
      seed: simSeed,
      engine: simEngine,
      cellVariation: simCellVariation,
      resets: simResets.resets,
      log: (line) => console.log(line),
      onChange: () => control?.refresh(),
    });
    control = await startFleetControl(fleet, join(options.dataDir, "fleet.json"));
    const speedText = Number.isFinite(simSpeed) ? `${simSpeed}x real time` : "maximum speed";
    console.log(`simulated fleet: ${fleet.cells().length} cells (${fleet.cells().join(" ")}) at ${speedText}` +
      (simCellVariation > 0 ? `, per-cell variation scale ${simCellVariation}` : "") +
      (simCoordinators ? `, spread over the coordinators at ${simCoordinators.join(" ")}` : ""));
    console.log(`fleet control   ${control.url} (npm run fleet -- status)`);
    if (simResets.resets === "operator") {
      if (simResets.simulatedOperator) {
        // The simulated operator calls the station API with a key of the operator account made for it now.
        const key = await createApiKey(coordinator.db, CATALOG_ACCOUNT_ID, ["keys:admin", "runs:read", "streams:read"], new Date());
        simOperatorKeyId = key.row.id;
        const simFleet = fleet;
        simOperator = new SimOperator({
          baseUrl: coordinator.baseUrl, apiKey: key.secret, seed: simSeed, errorRate: simResets.errorRate,
          setSceneWrong: (cellId) => simFleet.misplaceNextScene(cellId), groundTruth: (cellId) => simFleet.groundTruth(cellId), log: (line) => console.log(line),
        });
        simOperator.start();
        console.log(`operator resets, labels and interventions: the simulated operator confirms each scene, labels tasks judged by a person and helps episodes paused for an intervention (error rate ${simResets.errorRate}); ASSAY_SIM_OPERATOR=off leaves them to the console's Station page`);
      } else {
        console.log("operator resets: each reset waits for a person at the console's Station page (#/station, operator key)");
      }
    }
    if (simJudgeSettings) {
      const simFleet = fleet;
      simJudge = new SimJudge({
        seed: simSeed, errorRate: simJudgeSettings.errorRate, port: simJudgeSettings.port, groundTruth: (cellId) => simFleet.groundTruth(cellId), log: (line) => console.log(line),
      });
      const url = await simJudge.start().catch((error: Error) => fail(`ASSAY_SIM_JUDGE: the simulated judge could not listen on port ${simJudgeSettings.port}: ${error.message}`));
      console.log(`simulated judge ${url} (error rate ${simJudgeSettings.errorRate}): name it as a run's judge.url for tasks judged by a person (docs/judges.md)`);
    }
  } else {
    console.log("simulated fleet: off (ASSAY_FLEET=none); waiting for real cell agents");
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping cells and coordinator`);
    await control?.close();
    await simOperator?.stop();
    await simJudge?.stop();
    if (simOperatorKeyId) await revokeKey(coordinator.db, simOperatorKeyId, new Date().toISOString());
    await fleet?.stop();
    await coordinator.stop();
    if (embedded) {
      // The last coordinator out stops the shared server; one that stops earlier leaves it to the others.
      const left = await embedded.leave().catch((error: Error) => {
        console.error(`embedded PostgreSQL: could not stop it: ${error.message}`);
        return undefined;
      });
      if (left?.state === "stopped") console.log("embedded PostgreSQL: stopped (no other coordinator connected)");
      else if (left?.state === "left-running") console.log(`embedded PostgreSQL: left running for ${left.otherClients} connection(s) of other coordinators; the last one to stop shuts it down`);
      else if (left?.state === "not-running") console.log("embedded PostgreSQL: it had stopped already");
    }
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

await main();
