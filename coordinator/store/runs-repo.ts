/**
 * Runs: rows of `runs`, their episodes at creation, and `run_status_history`. Every status change
 * goes through `setRunStatus`, which asks run-state.ts for the move and throws on an illegal one;
 * coordinator/lifecycle/run-lifecycle.ts is its only caller in production. Nothing here publishes
 * events. Readers get a `RunRecord` (JSON columns parsed, every run with at least one unit).
 */
import * as crypto from "node:crypto";
import type { ErrorCode } from "../errors/codes.js";
import type { HeadlinePrior } from "../stats/beta-binomial-rate.js";
import type { RunUnit } from "../domain/units.js";
import type { RunKindName } from "../domain/run-kinds.js";
import { transitionRun, type RunStatus } from "../domain/run-state.js";
import type { Db } from "./database.js";
import { insertionOrder, jsonText } from "./sql-dialect.js";
import { addRunFacets, insertRunIndex, runFacets } from "./run-facets.js";
import { EPISODE_RUN_ROW_SQL, LOCKED_EPISODE_RUN_ROW_SQL, LOCKED_RUN_ROW_SQL, RUN_ROW_SQL, RUN_VIEW_ROW_SQL } from "./run-row-sql.js";

export interface RunRow {
  id: string;
  account_id: string;
  kind: string;
  status: RunStatus;
  created: string;
  completed: string | null;
  /** JSON: submitted fields, defaults filled in. */
  request: string;
  /** JSON: {robot, environment, task, perturbation_rev}. */
  resolved_pins: string;
  /** JSON RunPlan. */
  plan: string;
  result: string | null;
  status_code: string | null;
  status_message: string | null;
  idempotency_key: string | null;
  priority: string;
  episodes_total: number;
  /** JSON array of RunUnit (coordinator/domain/units.ts); null for kind `run`. */
  units: string | null;
  /** JSON: what a kind decided while running (sequential decisions, threshold phases); null when nothing. */
  kind_state: string | null;
  /** JSON RunHeadlinePriors: the priors the run was submitted under; null for runs from before them (the default). */
  headline_priors?: string | null;
  /** The run's name; null when it has none (or was stored before names). */
  name?: string | null;
  /** JSON object of strings: the run's current metadata; null for none. */
  metadata?: string | null;
}

/** The headline priors a run was submitted under, by `<robot model>/<environment class>` of its units. */
export type RunHeadlinePriors = Record<string, HeadlinePrior>;

/** What the scheduler and the cells need to run the episodes (stored as runs.plan). */
export interface RunPlan {
  model: string;
  firmware: string;
  /** `<name>@<version>`. */
  environment: string;
  /** Run seed; each episode's seed derives from it with `episodeSeed`. */
  seed: number;
  control_rate_hz: number;
  max_duration_s: number;
  /** Idle seconds before a cell ends an unfinished episode early (runs without interventions); absent in runs from before it existed: never. */
  idle_end_s?: number;
  /** True for a task pilot (coordinator/tasks/pilot.ts). */
  pilot?: boolean;
  /** Kind-specific settings (coordinator/kinds/*), e.g. compare's `sequential`. */
  kind?: Record<string, unknown>;
  /** A replay run (coordinator/replay/): every episode reproduces this replay spec exactly. */
  replay_spec?: Record<string, unknown>;
  replay_of?: { run_id: string; episode_id: string };
}

/** One episode of a multi-unit run, as inserted: its unit, seed and what its assignment carries. */
export interface NewEpisode {
  unit: number;
  seed: number;
  /** JSON-able: {replay_spec?, pair?, role?, phase?, ...}; null when the seed says it all. */
  assign?: object | null;
}

export interface NewRun {
  id: string;
  accountId: string;
  kind: string;
  created: string;
  request: object;
  resolvedPins: { robot: string; environment: string; task: string; perturbation_rev: string; models?: ResolvedPins["models"] };
  plan: RunPlan;
  priority: string;
  episodesTotal: number;
  idempotencyKey?: string | null;
  /** Units of a multi-unit kind (coordinator/domain/units.ts); absent for kind `run`, whose one unit is its plan. */
  units?: RunUnit[];
  /** Episodes of a multi-unit kind, in index order; when given, `episodesTotal` must equal its length. */
  episodes?: NewEpisode[];
  kindState?: object | null;
  /** The headline priors in force at submission, for each of its units' robot model and environment class. */
  headlinePriors?: RunHeadlinePriors | null;
  /** Its name and metadata (coordinator/runs/run-labels.ts); default none. */
  labels?: { name: string | null; metadata: Record<string, string> };
}

/**
 * One-shot SHA-256 (node:crypto `hash`, Node 20.12 and later). A `createHash` object per episode
 * leaves a native handle per episode for the garbage collector: tens of thousands of them made each
 * young-generation collection of a large submission pause the loop for tens of milliseconds.
 */
const sha256OneShot = (crypto as unknown as { hash?: (algorithm: string, data: string, encoding: "buffer") => Buffer }).hash;
const sha256 = (text: string): Buffer => sha256OneShot ? sha256OneShot("sha256", text, "buffer") : crypto.createHash("sha256").update(text).digest();

/** Deterministic 31-bit seed of episode `idx` of a run seeded `runSeed`. */
export function episodeSeed(runSeed: number, idx: number): number {
  return sha256(`${runSeed}:${idx}`).readUInt32BE(0) & 0x7fffffff;
}

/** Id of episode `idx` of a run: `ep_<run suffix>_<idx>`, stable and readable in logs. */
export function episodeId(runId: string, idx: number): string {
  return `ep_${runId.replace(/^run_/, "")}_${idx}`;
}

/**
 * The run and index an episode id names, as episodeId makes them; undefined for an id of another form. A message's
 * id is the cell's word: a caller that acts on these checks them against the episode's row.
 */
export function episodeIdParts(id: string): { runId: string; idx: number } | undefined {
  const match = /^ep_(.+)_(\d{1,9})$/.exec(id);
  return match ? { runId: `run_${match[1]}`, idx: Number(match[2]) } : undefined;
}

/**
 * Inserts the run, its pending episodes (attempt 0, seeds from `episodeSeed` or the given list) and
 * a `queued` history row. Up to EPISODES_PER_TRANSACTION episodes commit with the run; the rest are
 * recorded in `runs.backfill` for backfillEpisodes, which the caller runs in later turns of the
 * event loop (a 10,000-episode run must not stall every other request). Returns whether a backfill
 * remains.
 */
export async function insertRun(db: Db, row: NewRun): Promise<boolean> {
  await db.transaction(async (db) => {
    const insertRunRow = db.prepare(
      `INSERT INTO runs (id, account_id, kind, status, created, request, resolved_pins, plan, idempotency_key, priority, episodes_total, units, kind_state, headline_priors, name, metadata)
       VALUES (@id, @account_id, @kind, 'queued', @created, @request, @resolved_pins, @plan, @idempotency_key, @priority, @episodes_total, @units, @kind_state, @headline_priors, @name, @metadata)`,
    );
    const insertHistory = db.prepare(`INSERT INTO run_status_history (run_id, status, at) VALUES (?, 'queued', ?)`);
    await insertRunRow.run({
      id: row.id,
      account_id: row.accountId,
      kind: row.kind,
      created: row.created,
      request: JSON.stringify(row.request),
      resolved_pins: JSON.stringify(row.resolvedPins),
      plan: JSON.stringify(row.plan),
      idempotency_key: row.idempotencyKey ?? null,
      priority: row.priority,
      episodes_total: row.episodes ? row.episodes.length : row.episodesTotal,
      units: row.units ? JSON.stringify(row.units) : null,
      kind_state: row.kindState ? JSON.stringify(row.kindState) : null,
      headline_priors: row.headlinePriors ? JSON.stringify(row.headlinePriors) : null,
      name: row.labels?.name ?? null,
      metadata: row.labels && Object.keys(row.labels.metadata).length > 0 ? JSON.stringify(row.labels.metadata) : null,
    });
    const request = row.request as Record<string, unknown>;
    const units = row.units ?? [unitOfPlan(row.plan, row.resolvedPins, request)];
    await insertRunIndex(db, { id: row.id, accountId: row.accountId, facets: runFacets(units, request), metadata: row.labels?.metadata ?? {} });
    const total = row.episodes ? row.episodes.length : row.episodesTotal;
    const first = Math.min(total, EPISODES_PER_TRANSACTION);
    if (row.episodes) await insertListedEpisodes(db, row.id, row.episodes.slice(0, first), 0);
    else await insertEpisodeRows(db, Array.from({ length: first }, (_, idx) => ({ idx, seed: episodeSeed(row.plan.seed, idx) })), row.id, "fail");
    if (first < total) {
      const backfill: Backfill = { next: first, ...(row.episodes ? { episodes: row.episodes.slice(first) } : {}) };
      await db.prepare("UPDATE runs SET backfill = ? WHERE id = ?").run(JSON.stringify(backfill), row.id);
    }
    await insertHistory.run(row.id, row.created);
  });
  return backfilling(db, row.id);
}

/** Episodes inserted per transaction when a run is created (and per backfill step). */
export const EPISODES_PER_TRANSACTION = 500;

/**
 * What is left to insert of a run's episodes, written once when the run is created: from index
 * `next`; `episodes[i]` is episode `next + i` when they are not generated from the seed. It is not
 * rewritten as steps go (a step would otherwise parse and write back the whole list of a
 * 10,000-episode compare): how far the backfill got is the highest index already in `episodes`.
 */
export interface Backfill {
  next: number;
  episodes?: NewEpisode[];
}

export async function backfilling(db: Db, runId: string): Promise<boolean> {
  return Boolean((await db.prepare("SELECT backfill IS NOT NULL AS open FROM runs WHERE id = ?").get(runId) as { open: number | boolean } | undefined)?.open);
}

/**
 * Inserts the next `limit` (default EPISODES_PER_TRANSACTION) of a run's remaining episodes; returns
 * whether more remain. `parsed` keeps each run's Backfill once read (the caller's, per process), so
 * a step reads neither the list nor its JSON again.
 */
export async function backfillEpisodes(db: Db, runId: string, limit = EPISODES_PER_TRANSACTION, parsed?: Map<string, Backfill>): Promise<boolean> {
  return await db.transaction(async (db) => {
    if (!await backfilling(db, runId)) {
      parsed?.delete(runId);
      return false;
    }
    let backfill = parsed?.get(runId);
    if (!backfill) {
      backfill = JSON.parse((await db.prepare("SELECT backfill FROM runs WHERE id = ?").get(runId) as { backfill: string }).backfill) as Backfill;
      parsed?.set(runId, backfill);
    }
    const run = await db.prepare("SELECT plan, episodes_total FROM runs WHERE id = ?").get(runId) as { plan: string; episodes_total: number };
    const total = backfill.episodes ? backfill.next + backfill.episodes.length : run.episodes_total;
    const last = (await db.prepare("SELECT MAX(idx) AS last FROM episodes WHERE run_id = ? AND idx < ?").get(runId, total) as { last: number | null }).last;
    const from = Math.max(backfill.next, (last ?? -1) + 1);
    const end = Math.min(total, from + limit);
    if (backfill.episodes) {
      await insertListedEpisodes(db, runId, backfill.episodes.slice(from - backfill.next, end - backfill.next), from);
    } else {
      const seed = (JSON.parse(run.plan) as RunPlan).seed;
      await insertEpisodeRows(db, Array.from({ length: Math.max(0, end - from) }, (_, k) => ({ idx: from + k, seed: episodeSeed(seed, from + k) })), runId, "skip");
    }
    if (end < total) return true;
    await db.prepare("UPDATE runs SET backfill = NULL WHERE id = ?").run(runId);
    parsed?.delete(runId);
    return false;
  });
}

/** Runs whose episodes are still being inserted (a coordinator stopped or crashed mid-creation). */
export async function runsBackfilling(db: Db): Promise<string[]> {
  return (await db.prepare("SELECT id FROM runs WHERE backfill IS NOT NULL ORDER BY created").all() as Array<{ id: string }>).map((r) => r.id);
}

async function insertListedEpisodes(db: Db, runId: string, episodes: readonly NewEpisode[], firstIdx: number): Promise<void> {
  await insertEpisodeRows(db, episodes.map((e, i) => ({ idx: firstIdx + i, seed: e.seed, unit: e.unit, assign: e.assign })), runId, "skip");
}

/** Rows one INSERT of episodes carries at most (6 parameters each). */
const EPISODE_ROWS_PER_INSERT = 64;

/**
 * Inserts pending episodes of a run, several rows per statement: batches of 64, 32, ..., 1 rows (the
 * binary digits of what is left), so a handful of SQL texts serve every count and each is prepared
 * once. `conflict` "skip": an episode already there is left as it is (a backfill step run again).
 */
async function insertEpisodeRows(db: Db, rows: ReadonlyArray<{ idx: number; seed: number; unit?: number | null; assign?: NewEpisode["assign"] | null }>, runId: string, conflict: "fail" | "skip"): Promise<void> {
  for (let at = 0; at < rows.length;) {
    let size = EPISODE_ROWS_PER_INSERT;
    while (size > rows.length - at) size /= 2;
    const values = Array.from({ length: size }, () => "(?, ?, ?, 'pending', 0, ?, ?, ?)").join(", ");
    const params = rows.slice(at, at + size).flatMap((e) => [episodeId(runId, e.idx), runId, e.idx, e.seed, e.unit ?? null, e.assign ? JSON.stringify(e.assign) : null]);
    await db.prepare(`INSERT INTO episodes (id, run_id, idx, status, attempt, seed, unit, assign) VALUES ${values}${conflict === "skip" ? " ON CONFLICT DO NOTHING" : ""}`).run(...params);
    at += size;
  }
}

/**
 * Inserts pending episodes of unit runs from index `firstIdx` on and raises `episodes_total` to
 * cover them. Used at creation and by kinds that add episodes while running (threshold).
 */
export async function appendEpisodes(db: Db, runId: string, episodes: readonly NewEpisode[], firstIdx: number): Promise<void> {
  await db.transaction(async (db) => {
    await insertEpisodeRows(db, episodes.map((e, i) => ({ idx: firstIdx + i, seed: e.seed, unit: e.unit, assign: e.assign })), runId, "fail");
    await db.prepare(`UPDATE runs SET episodes_total = CASE WHEN episodes_total < @total THEN @total ELSE episodes_total END WHERE id = @runId`).run({ total: firstIdx + episodes.length, runId });
  });
}

/** Stores what a kind decided while running (runs.kind_state). */
export async function setKindState(db: Db, runId: string, state: object): Promise<void> {
  await db.prepare(`UPDATE runs SET kind_state = ? WHERE id = ?`).run(JSON.stringify(state), runId);
}

/** The `resolved_pins` of a run; a run over several pins also lists them all. */
export interface ResolvedPins {
  robot: string;
  environment: string;
  task: string;
  perturbation_rev: string;
  /** Checkpoint policies: `hf` as submitted -> the model pinned (coordinator/models/policy-preparation.ts). */
  models?: Record<string, { id: string; sha256: string; bytes: number; source: "upload" | "mirror" }>;
  /** Container policies: image as submitted -> the image ids and registry digests the cells reported running. */
  images?: Record<string, { ids: string[]; repo_digests: string[] }>;
  robots?: string[];
  environments?: string[];
  tasks?: string[];
}

/** A run as the coordinator reads it: JSON columns parsed, camelCase, and always at least one unit. */
export interface RunRecord {
  id: string;
  accountId: string;
  kind: RunKindName;
  status: RunStatus;
  created: string;
  completed: string | null;
  /** Submitted fields, defaults filled in. */
  request: Record<string, unknown>;
  resolvedPins: ResolvedPins;
  plan: RunPlan;
  result: Record<string, unknown> | null;
  statusCode: string | null;
  statusMessage: string | null;
  idempotencyKey: string | null;
  priority: string;
  episodesTotal: number;
  /** Kind `run` (stored without units) gets its one unit from its plan and pins; its episodes are unit 0. */
  units: RunUnit[];
  kindState: Record<string, unknown> | null;
  /** The headline priors fixed at submission (absent or empty for runs from before them: those use the default). */
  headlinePriors?: RunHeadlinePriors;
  /** Its current name (null: none) and metadata ({}: none); POST /v1/runs/{run_id} changes them. */
  name?: string | null;
  metadata?: Record<string, string>;
}

/** The one unit of a kind `run` run: its plan's robot and scene, its task pin and policy. */
/** Kind `run`'s one unit, made from its plan, pins and request (it is stored without units). */
export function unitOfPlan(plan: RunPlan, pins: Pick<ResolvedPins, "robot" | "task">, request: Record<string, unknown>): RunUnit {
  return {
    key: `${pins.robot}/${plan.environment}`,
    robot: pins.robot,
    model: plan.model,
    firmware: plan.firmware,
    environment: plan.environment,
    task: pins.task,
    policy: (request.policy ?? {}) as Record<string, unknown>,
  };
}

/** Parses a `runs` row once, at the store's edge. */
export function runRecordOf(row: RunRow): RunRecord {
  const request = JSON.parse(row.request) as Record<string, unknown>;
  const resolvedPins = JSON.parse(row.resolved_pins) as ResolvedPins;
  const plan = JSON.parse(row.plan) as RunPlan;
  return {
    id: row.id,
    accountId: row.account_id,
    kind: row.kind as RunKindName,
    status: row.status,
    created: row.created,
    completed: row.completed,
    request,
    resolvedPins,
    plan,
    result: row.result === null ? null : (JSON.parse(row.result) as Record<string, unknown>),
    statusCode: row.status_code,
    statusMessage: row.status_message,
    idempotencyKey: row.idempotency_key,
    priority: row.priority,
    episodesTotal: row.episodes_total,
    units: row.units ? (JSON.parse(row.units) as RunUnit[]) : [unitOfPlan(plan, resolvedPins, request)],
    kindState: row.kind_state === null ? null : (JSON.parse(row.kind_state) as Record<string, unknown>),
    headlinePriors: row.headline_priors ? (JSON.parse(row.headline_priors) as RunHeadlinePriors) : {},
    name: row.name ?? null,
    metadata: row.metadata ? (JSON.parse(row.metadata) as Record<string, string>) : {},
  };
}

/** The run as a RunRecord, or undefined. */
/**
 * Locks the run's row until the transaction ends (PostgreSQL: SELECT ... FOR UPDATE), so that the
 * transaction's reads of the run and its episodes, and the moves it decides from them, are not
 * interleaved with another coordinator's. Every transaction that changes a run's status or its
 * episodes calls it first (a lock taken in one order everywhere cannot deadlock). SQLite has one
 * writer at a time and one coordinator per file: nothing to do.
 * NOTE: call it inside a transaction; outside one the lock ends with the statement.
 */
export async function lockRun(db: Db, runId: string): Promise<void> {
  if (db.dialect === "postgres") await db.prepare("SELECT id FROM runs WHERE id = ? FOR UPDATE").get(runId);
}

/**
 * lockRun and a read of the run's status in one statement (on SQLite, the read alone); undefined when
 * there is no such run. For a transaction that decides from the status only.
 */
export async function lockRunStatus(db: Db, runId: string): Promise<RunStatus | undefined> {
  const sql = db.dialect === "postgres" ? "SELECT status FROM runs WHERE id = ? FOR UPDATE" : "SELECT status FROM runs WHERE id = ?";
  return (await db.prepare(sql).get(runId) as { status: RunStatus } | undefined)?.status;
}

/** lockRun and getRun in one statement (on SQLite, the read alone): the run as it stands under its lock. */
export async function lockAndGetRun(db: Db, runId: string): Promise<RunRecord | undefined> {
  const row = await db.prepare(db.dialect === "postgres" ? LOCKED_RUN_ROW_SQL : RUN_ROW_SQL).get(runId) as RunRow | undefined;
  return row ? runRecordOf(row) : undefined;
}

/**
 * lockAndGetRun for the run of an episode, found by the episode's id in the same statement (an
 * episode's run never changes); undefined for an unknown episode. Read the episode after it, so
 * that the read sees what the run's lock holder committed.
 */
export async function lockRunOfEpisode(db: Db, episodeId: string): Promise<RunRecord | undefined> {
  const row = await db.prepare(db.dialect === "postgres" ? LOCKED_EPISODE_RUN_ROW_SQL : EPISODE_RUN_ROW_SQL).get(episodeId) as RunRow | undefined;
  return row ? runRecordOf(row) : undefined;
}

/**
 * The run of an episode, found by the episode's id, read without a lock: for a finish that chooses from the run's kind
 * and status which lock to take (fleet/episode-messages.ts). Undefined for an unknown episode.
 */
export async function getRunOfEpisode(db: Db, episodeId: string): Promise<RunRecord | undefined> {
  const row = await db.prepare(EPISODE_RUN_ROW_SQL).get(episodeId) as RunRow | undefined;
  return row ? runRecordOf(row) : undefined;
}

/**
 * Running runs none of whose episodes is open (pending, assigned or running): runs whose last finish committed and
 * whose completion was not decided after it (the coordinator stopped between the two; fleet/run-completion.ts sweeps
 * them). At most `limit`, oldest first.
 */
export async function listRunningRunsWithoutOpenEpisodes(db: Db, limit: number): Promise<string[]> {
  const rows = await db.prepare(
    `SELECT id FROM runs r WHERE r.status = 'running'
       AND NOT EXISTS (SELECT 1 FROM episodes e WHERE e.run_id = r.id AND e.status IN ('pending', 'assigned', 'running'))
     ORDER BY r.created, r.id LIMIT ?`,
  ).all(limit) as Array<{ id: string }>;
  return rows.map((row) => row.id);
}

/** lockRunOfEpisode for a transaction that decides from the run's status only. */
export async function lockRunStatusOfEpisode(db: Db, episodeId: string): Promise<{ runId: string; status: RunStatus } | undefined> {
  const row = await db.prepare(
    `SELECT id, status FROM runs WHERE id = (SELECT run_id FROM episodes WHERE id = ?)${db.dialect === "postgres" ? " FOR UPDATE" : ""}`,
  ).get(episodeId) as { id: string; status: RunStatus } | undefined;
  return row ? { runId: row.id, status: row.status } : undefined;
}

export function getRun(db: Db, runId: string): Promise<RunRecord | undefined> {
  // Plain promise chains, not async functions: this read is on every GET of a run (issue 29), and
  // each async layer is one more promise for the async hooks of the transaction scope to track.
  return getRunRow(db, runId).then((row) => (row ? runRecordOf(row) : undefined));
}

/** What a run's view shows (lifecycle/run-view.ts) and the account it belongs to; a RunRecord is one. */
export type RunViewRecord = Pick<
  RunRecord,
  "id" | "accountId" | "kind" | "status" | "created" | "completed" | "request" | "resolvedPins" | "plan" | "result" | "statusCode" | "statusMessage" | "priority" | "units" | "name" | "metadata"
>;

/** The columns of RUN_VIEW_ROW_SQL, in its order: the index of each in the row as `values` reads it. */
const RUN_VIEW_COLUMNS = [
  "id", "account_id", "kind", "status", "created", "completed", "request", "resolved_pins", "plan", "result", "status_code", "status_message", "priority", "units", "name", "metadata",
] as const satisfies readonly (keyof RunRow)[];

if (RUN_VIEW_ROW_SQL !== `SELECT ${RUN_VIEW_COLUMNS.join(", ")} FROM runs WHERE id = ?`) throw new Error("RUN_VIEW_COLUMNS must list RUN_VIEW_ROW_SQL's columns in its order");

const column = Object.fromEntries(RUN_VIEW_COLUMNS.map((name, index) => [name, index])) as { readonly [K in (typeof RUN_VIEW_COLUMNS)[number]]: number };

/** A run's view record as getRunView reads it, with the stored values it was read from. */
export interface StoredRunViewRecord extends RunViewRecord {
  /**
   * Every column the record is made from, as stored (text or null), in RUN_VIEW_ROW_SQL's order: two
   * reads with equal values, column by column (`sameStoredColumns`), make the same record, so a view
   * made from one is the view of the other (lifecycle/run-view-bodies.ts).
   */
  readonly storedColumns: readonly (string | null)[];
}

/** Whether two reads of getRunView read the same values in every column. */
export function sameStoredColumns(a: readonly (string | null)[], b: readonly (string | null)[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * A run's view record as read: each JSON column parsed when first read (only runs of several units
 * show their plan's fields and units, only ended runs their result, and a view made before from the
 * same stored values needs none), the columns no view shows not read at all. Made from the row's
 * values as an array (Statement.values): no object with a property per column.
 */
class StoredRunView implements StoredRunViewRecord {
  readonly id: string;
  readonly accountId: string;
  readonly kind: RunKindName;
  readonly status: RunStatus;
  readonly created: string;
  readonly completed: string | null;
  readonly statusCode: string | null;
  readonly statusMessage: string | null;
  readonly priority: string;
  readonly name: string | null;
  private parsedRequest?: Record<string, unknown>;
  private parsedPins?: ResolvedPins;
  private parsedMetadata?: Record<string, string>;
  private parsedPlan?: RunPlan;
  private parsedUnits?: RunUnit[];
  private parsedResult?: Record<string, unknown>;

  constructor(readonly storedColumns: readonly (string | null)[]) {
    const row = storedColumns;
    this.id = row[column.id] as string;
    this.accountId = row[column.account_id] as string;
    this.kind = row[column.kind] as RunKindName;
    this.status = row[column.status] as RunStatus;
    this.created = row[column.created] as string;
    this.completed = row[column.completed] ?? null;
    this.statusCode = row[column.status_code] ?? null;
    this.statusMessage = row[column.status_message] ?? null;
    this.priority = row[column.priority] as string;
    this.name = row[column.name] ?? null;
  }

  get request(): Record<string, unknown> {
    return (this.parsedRequest ??= JSON.parse(this.storedColumns[column.request] as string) as Record<string, unknown>);
  }

  get resolvedPins(): ResolvedPins {
    return (this.parsedPins ??= JSON.parse(this.storedColumns[column.resolved_pins] as string) as ResolvedPins);
  }

  get metadata(): Record<string, string> {
    const metadata = this.storedColumns[column.metadata];
    return (this.parsedMetadata ??= metadata ? (JSON.parse(metadata) as Record<string, string>) : {});
  }

  get plan(): RunPlan {
    return (this.parsedPlan ??= JSON.parse(this.storedColumns[column.plan] as string) as RunPlan);
  }

  get units(): RunUnit[] {
    const units = this.storedColumns[column.units];
    return (this.parsedUnits ??= units ? (JSON.parse(units) as RunUnit[]) : [unitOfPlan(this.plan, this.resolvedPins, this.request)]);
  }

  get result(): Record<string, unknown> | null {
    const result = this.storedColumns[column.result];
    if (result === null || result === undefined) return null;
    return (this.parsedResult ??= JSON.parse(result) as Record<string, unknown>);
  }
}

/**
 * The run as its view needs it (GET /v1/runs/{run_id}), or undefined: the same fields as getRun's
 * record, with less read and parsed (issue 29: this read is on every GET of a run).
 */
export function getRunView(db: Db, runId: string): Promise<StoredRunViewRecord | undefined> {
  return db.prepare(RUN_VIEW_ROW_SQL).values(runId).then((row) => (row ? new StoredRunView(row as (string | null)[]) : undefined));
}

/** Adds models to a run's `resolved_pins.models` (a threshold checkpoint that names a model). */
export async function addPinnedModels(db: Db, runId: string, models: NonNullable<ResolvedPins["models"]>): Promise<void> {
  const row = await db.prepare("SELECT resolved_pins FROM runs WHERE id = ?").get(runId) as { resolved_pins: string } | undefined;
  if (!row) throw new Error(`addPinnedModels: no run ${runId}`);
  const pins = JSON.parse(row.resolved_pins) as ResolvedPins;
  await db.prepare("UPDATE runs SET resolved_pins = ? WHERE id = ?").run(JSON.stringify({ ...pins, models: { ...pins.models, ...models } }), runId);
}

/**
 * Records the digest a cell reported for a container policy's image in the run's
 * `resolved_pins.images` (ids and registry digests accumulate: normally one each, more when cells
 * held different builds under one tag). Returns true when it added something new.
 */
export async function addPinnedImage(db: Db, runId: string, pin: { image: string; id: string; repo_digests: readonly string[] }): Promise<boolean> {
  const row = await db.prepare("SELECT resolved_pins FROM runs WHERE id = ?").get(runId) as { resolved_pins: string } | undefined;
  if (!row) return false;
  const pins = JSON.parse(row.resolved_pins) as ResolvedPins;
  const images = pinnedImagesWith(pins, pin);
  if (!images) return false;
  await db.prepare("UPDATE runs SET resolved_pins = ? WHERE id = ?").run(JSON.stringify({ ...pins, images }), runId);
  return true;
}

/** The run's `resolved_pins.images` with the reported pin added; undefined when it holds the pin already (addPinnedImage would change nothing). */
export function pinnedImagesWith(pins: ResolvedPins, pin: { image: string; id: string; repo_digests: readonly string[] }): ResolvedPins["images"] | undefined {
  const known = pins.images?.[pin.image] ?? { ids: [], repo_digests: [] };
  const ids = known.ids.includes(pin.id) ? known.ids : [...known.ids, pin.id];
  const repoDigests = [...known.repo_digests, ...pin.repo_digests.filter((d) => !known.repo_digests.includes(d))];
  if (ids.length === known.ids.length && repoDigests.length === known.repo_digests.length) return undefined;
  return { ...pins.images, [pin.image]: { ids, repo_digests: repoDigests } };
}

/** Replaces a run's units (a threshold checkpoint swaps the policy); the runs list finds it under the new policies too. */
export async function setRunUnits(db: Db, runId: string, units: readonly RunUnit[]): Promise<void> {
  await db.transaction(async (db) => {
    await db.prepare(`UPDATE runs SET units = ? WHERE id = ?`).run(JSON.stringify(units), runId);
    const row = await db.prepare("SELECT account_id, request FROM runs WHERE id = ?").get(runId) as { account_id: string; request: string } | undefined;
    if (row) await addRunFacets(db, runId, row.account_id, runFacets(units, JSON.parse(row.request) as Record<string, unknown>));
  });
}

/** The account that owns the run, or undefined when there is no such run. */
export async function findRunAccountId(db: Db, runId: string): Promise<string | undefined> {
  return (await db.prepare(`SELECT account_id FROM runs WHERE id = ?`).get(runId) as { account_id: string } | undefined)?.account_id;
}

export function getRunRow(db: Db, runId: string): Promise<RunRow | undefined> {
  return db.prepare(RUN_ROW_SQL).get(runId) as Promise<RunRow | undefined>;
}

/** Runs that may still get episodes assigned (queued, scheduling, running), as records. */
export async function listOpenRuns(db: Db): Promise<RunRecord[]> {
  return (await db.prepare(`SELECT * FROM runs WHERE status IN ('queued', 'scheduling', 'running')`).all() as RunRow[]).map(runRecordOf);
}

export async function findRunByIdempotencyKey(db: Db, accountId: string, key: string): Promise<RunRow | undefined> {
  return await db.prepare(`SELECT * FROM runs WHERE account_id = ? AND idempotency_key = ?`).get(accountId, key) as RunRow | undefined;
}

/**
 * Moves a run to `to`, recording history (and `completed` when completing, status_code and
 * status_message when given). Throws on an unknown run or a move run-state.ts does not allow: the
 * caller decides from the current status whether a move is due (coordinator/lifecycle/run-lifecycle.ts).
 */
export async function setRunStatus(db: Db, runId: string, to: RunStatus, opts: { cell?: string | null; code?: ErrorCode; message?: string; at?: string } = {}): Promise<true> {
  return await db.transaction(async (db) => {
    const row = await db.prepare(`SELECT status FROM runs WHERE id = ?`).get(runId) as { status: RunStatus } | undefined;
    if (!row) throw new Error(`setRunStatus: no run ${runId}`);
    const status = transitionRun(row.status, to);
    const at = opts.at ?? new Date().toISOString();
    await db.prepare(
      `UPDATE runs SET status = @status,
         completed = CASE WHEN @status = 'completed' THEN @at ELSE completed END,
         status_code = COALESCE(@code, status_code),
         status_message = COALESCE(@message, status_message)
       WHERE id = @runId`,
    ).run({ status, at, code: opts.code ?? null, message: opts.message ?? null, runId });
    await db.prepare(`INSERT INTO run_status_history (run_id, status, at, cell, reason) VALUES (?, ?, ?, ?, ?)`).run(
      runId, status, at, opts.cell ?? null, opts.code ?? opts.message ?? null,
    );
    return true as const;
  });
}

/** Stores the run's Result JSON (complete, or partial for a stopped run). */
export async function setRunResult(db: Db, runId: string, result: object): Promise<void> {
  await db.prepare(`UPDATE runs SET result = ? WHERE id = ?`).run(JSON.stringify(result), runId);
}

/** The newest history row's cell, for the SSE `status` event of a late subscriber. */
export async function lastStatusCell(db: Db, runId: string): Promise<string | null> {
  const row = await db.prepare(`SELECT cell FROM run_status_history WHERE run_id = ? AND cell IS NOT NULL ORDER BY ${insertionOrder(db)} DESC LIMIT 1`).get(runId) as { cell: string } | undefined;
  return row?.cell ?? null;
}

/** A page of runs as the retention sweep reads them: id order after `afterRunId`, with the `data.retention` each was submitted with (null when absent). */
export async function listRunRetentionsPage(db: Db, afterRunId: string, limit: number): Promise<Array<{ id: string; account_id: string; retention: string | null }>> {
  return await db.prepare(
    `SELECT id, account_id, ${jsonText(db, "request", "data", "retention")} AS retention FROM runs WHERE id > ? ORDER BY id LIMIT ?`,
  ).all(afterRunId, limit) as Array<{ id: string; account_id: string; retention: string | null }>;
}
