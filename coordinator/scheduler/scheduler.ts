/**
 * The scheduler: hands pending episodes to idle connected cells (see assignment-plan.ts for the
 * matching rule). A pass runs soon after every kick() (kicks in one tick coalesce into one pass)
 * and every `intervalMs` as a safety net, so a missed kick only delays work.
 */
import type { AssignEpisode } from "../../protocol/gen/cell.js";
import type { CellRegistry } from "../cells/registry.js";
import type { ConnectedCell } from "../cells/fleet-view.js";
import type { FleetMetrics } from "../cells/fleet-metrics.js";
import type { RunLifecycle } from "../lifecycle/run-lifecycle.js";
import type { RunStatus } from "../domain/run-state.js";
import type { Db } from "../store/database.js";
import { singleFlight } from "../async/single-flight.js";
import { claimPendingEpisode, claimPendingEpisodeOfStartedRun, listCellsHoldingEpisodes, listPendingOfUnit, type EpisodeRecord } from "../store/episodes-repo.js";
import { listCellsOfPairs } from "../store/episode-subsets-repo.js";
import { listOpenRuns, lockAndGetRun, lockRunStatus, type RunRecord } from "../store/runs-repo.js";
import { findPinnedTask } from "../store/tasks-repo.js";
import { transact } from "../store/tx.js";
import type { RunUnit } from "../domain/units.js";
import { compareRuns, planAssignments, type AvailableCell, type CellPin, type PlannedAssignment, type SchedulableRun } from "./assignment-plan.js";
import { resolveTaskKits } from "../kits/kit-physics.js";
import { withInstructionSet } from "../runs/instruction-set.js";
import { withJudge } from "../runs/judge-checks.js";
import { taskInstrumentKinds } from "../../protocol/predicates/index.js";
import { instrumentWait } from "./instrument-wait.js";
import { blockPairsByCell } from "./pair-blocking.js";

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/**
 * Money rules the scheduler obeys (coordinator/scheduler/budget-guard.ts implements them): how many
 * more episodes a run may start, and what to re-check once an episode's robot time is metered.
 */
export interface AssignmentBudget {
  /**
   * How many episodes of the run may be assigned now; Infinity when nothing caps it. With `next`
   * (pending episodes in the order they are offered): how many of its first ones fit, each priced
   * at its unit's rates; without: counted over the run's pending episodes by index. `on`: the
   * transaction to read in when the caller holds one (the store refuses a root statement inside it);
   * default the database. `run`: the run as the caller just read it on `on` (under its lock, in a
   * transaction), so that it is not read again.
   */
  episodeAllowance(runId: string, next?: ReadonlyArray<{ unit: number | null }>, on?: Db, run?: RunRecord): Promise<number>;
  /**
   * An episode of the run finished or was interrupted: its time is metered (may halt the run).
   * `run`: a record of the run read since it was submitted, for what never changes (its account,
   * its caps), so that a run without a cap is not read again. `account`: the account's budget as read when the
   * episode was metered, so that an account without a hard budget is not read again.
   */
  afterEpisodeMetered(runId: string, run?: RunRecord, account?: AccountBudgetRead): Promise<void>;
}

/**
 * What the caller read of the run's account's monthly budget just now, in the statement that metered the episode
 * (store/sequenced-reports-repo.ts finishEpisodeInSequence), so that the budget check does not read it again.
 */
export interface AccountBudgetRead {
  hardBudget: boolean;
}

export interface SchedulerOptions {
  db: Db;
  registry: CellRegistry;
  /** Moves a queued run to scheduling with its first assignment (and publishes that). */
  lifecycle: Pick<RunLifecycle, "scheduled">;
  metrics?: FleetMetrics;
  logger?: Logger;
  /** Period of the safety pass; default 1000. */
  intervalMs?: number;
  /** Clock for timestamps; default () => new Date(). */
  now?: () => Date;
  /** Budget rules; default none (every pending episode may be assigned). */
  budget?: AssignmentBudget;
  /**
   * Other coordinators on the same database, each scheduling its own cells: told once per kicked
   * pass, since work one coordinator made pending may fit another's idle cell. Default none.
   */
  peers?: { kick(): void };
}

export interface Scheduler {
  /** Asks for a pass soon, here and on the peers; many kicks in one tick make one pass. */
  kick(): void;
  /** Asks for a pass here only (a peer asked). */
  kickLocal(): void;
  /**
   * An episode of `runId` finished or was interrupted: re-checks its budgets, then asks for a pass here
   * (kickLocal: metering makes no episode pending, so the peers are not told; a caller that requeued an
   * episode kicks them). `run` and `account`: as for AssignmentBudget.afterEpisodeMetered.
   */
  episodeMetered(runId: string, run?: RunRecord, account?: AccountBudgetRead): Promise<void>;
  /**
   * Runs a pass now, through the same single flight as the kicked and periodic passes: when one is
   * running, a pass after it. Returns how many episodes that pass assigned; rejects with its error
   * if it failed (also logged). After stop(), 0 and no pass.
   */
  runPass(): Promise<number>;
  /**
   * Why the run's pending episodes wait, as of the last pass, when they wait for an instrument no
   * matching connected cell has now (scheduler/instrument-wait.ts); undefined otherwise.
   */
  waitingReason(runId: string): string | undefined;
  start(): void;
  stop(): Promise<void>;
}

/**
 * Assignment transactions of one pass in flight at once: enough to overlap round trips and commits
 * on PostgreSQL, few enough to leave the pool's other connections to the cells' messages.
 */
const ASSIGNMENTS_IN_FLIGHT = 4;

/** The image of a container policy (`{type: "container", image}`), else undefined: the scheduler prefers cells that list it. */
function containerImageOf(policy: unknown): string | undefined {
  const p = policy as { type?: unknown; image?: unknown } | undefined;
  return p && (p.type === undefined || p.type === "container") && typeof p.image === "string" ? p.image : undefined;
}

export function createScheduler(options: SchedulerOptions): Scheduler {
  const { db, registry, lifecycle, metrics } = options;
  const logger = options.logger ?? console;
  const now = options.now ?? (() => new Date());
  const intervalMs = options.intervalMs ?? 1000;
  let pending: NodeJS.Immediate | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const waits = new Map<string, string>();

  /** A pass's reads of pinned tasks: each pinned task is read once per pass. */
  type TaskReads = Map<string, ReturnType<typeof findPinnedTask>>;
  function pinnedTask(reads: TaskReads, taskPin: string): ReturnType<typeof findPinnedTask> {
    let read = reads.get(taskPin);
    if (!read) reads.set(taskPin, read = findPinnedTask(db, taskPin));
    return read;
  }

  async function taskJsonOf(reads: TaskReads, taskPin: string): Promise<string | undefined> {
    const task = await pinnedTask(reads, taskPin);
    if (!task) return undefined;
    // `kits`: the physical description of every kit/<name> the spec places (coordinator/kits/kit-physics.ts).
    return JSON.stringify({ ...task.spec, rev: /@v\d+$/.test(taskPin) ? taskPin : null, kits: await resolveTaskKits(db, task.account_id, task.spec) });
  }

  /** Instrument kinds a pinned task reads, cached per pass; [] when the task is unknown or does not parse. */
  async function instrumentsOfTask(cache: Map<string, string[]>, reads: TaskReads, taskPin: string): Promise<string[]> {
    let kinds = cache.get(taskPin);
    if (kinds === undefined) {
      const spec = (await pinnedTask(reads, taskPin))?.spec as { success_predicates?: unknown; stages?: unknown } | undefined;
      try {
        kinds = spec ? taskInstrumentKinds(spec) : [];
      } catch {
        kinds = []; // a stored task always parsed at freeze; the agent reports a bad one as it runs
      }
      cache.set(taskPin, kinds);
    }
    return kinds;
  }

  /** Recomputes each open run's instrument wait from the connected cells (any state) matching its units with pending episodes. */
  async function noteInstrumentWaits(open: RunRecord[], taskKinds: Map<string, string[]>, reads: TaskReads): Promise<void> {
    // Listed when a run's task first needs an instrument: most passes have none to check.
    let listed: ConnectedCell[] | undefined;
    const connectedCells = () => (listed ??= registry.localCells());
    waits.clear();
    for (const run of open) {
      for (const [u, unit] of run.units.entries()) {
        // A task that reads no instrument never waits for one: no store read for it on each pass.
        const required = await instrumentsOfTask(taskKinds, reads, unit.task);
        if (required.length === 0) continue;
        if ((await listPendingOfUnit(db, run.id, u, 1)).length === 0) continue;
        const pin = { model: unit.model, firmware: unit.firmware, environment: unit.environment };
        const matching = connectedCells().filter((c) => c.model === pin.model && c.firmware === pin.firmware && c.environment === pin.environment);
        const note = instrumentWait(
          { task: unit.task, pin: `${unit.robot} in ${unit.environment}`, required },
          matching.map((c) => {
            const kinds = [...new Set(c.instruments.map((i) => i.kind))];
            const live = registry.liveInstrumentKinds(c.cellId) ?? kinds;
            return { cellId: c.cellId, kinds, downKinds: kinds.filter((k) => !live.includes(k)) };
          }),
        );
        if (note) {
          waits.set(run.id, note);
          break;
        }
      }
    }
  }

  async function pass(): Promise<number> {
    const open = await listOpenRuns(db);
    const taskKinds = new Map<string, string[]>();
    const taskReads: TaskReads = new Map();
    await noteInstrumentWaits(open, taskKinds, taskReads);
    const connectedCells = registry.localCells();
    const free = connectedCells.filter((c) => c.state === "idle" && !registry.assignedEpisodeOf(c.cellId));
    // An idle cell may still hold an episode in the store (assigned before a restart, say): not offered.
    // Read for the idle cells only: a pass when one cell is free reads one cell, not the fleet's episodes.
    const held = await listCellsHoldingEpisodes(db, free.map((c) => c.cellId));
    const cells: AvailableCell[] = free
      .filter((c) => !held.has(c.cellId))
      .map((c) => ({
        cellId: c.cellId, model: c.model, firmware: c.firmware, environment: c.environment,
        instruments: registry.liveInstrumentKinds(c.cellId) ?? c.instruments.map((i) => i.kind),
        images: c.policyImages,
      }));
    if (cells.length === 0) return 0;

    const byId = new Map(open.map((r) => [r.id, r]));
    const connectedIds = new Set(connectedCells.map((c) => c.cellId));
    const idleIds = new Set(cells.map((c) => c.cellId));
    // Episodes offered this pass, with their unit.
    const offeredEpisodes = new Map<string, { unit: RunUnit; row: EpisodeRecord }>();
    // Runs in the order they are served, each matched against the cells the runs before it left free: the
    // plan is planAssignments' over every run at once, but a run is read only while a free cell could take
    // its work (its pending episodes, its budget), so a pass for one free cell reads the one run it serves.
    const planned: PlannedAssignment[] = [];
    let left = cells;
    for (const run of [...open].sort(compareRuns)) {
      if (left.length === 0) break;
      if (!run.units.some((unit) => left.some((c) => c.model === unit.model && c.firmware === unit.firmware && c.environment === unit.environment))) continue;
      const pendingOf = async (limit: number) => {
        const pending: EpisodeRecord[] = [];
        for (let u = 0; u < run.units.length; u++) pending.push(...await listPendingOfUnit(db, run.id, u, limit));
        return pending.sort((a, b) => a.idx - b.idx);
      };
      let offered = await pendingOf(cells.length);
      let cellOf = new Map<string, string>();
      if (offered.some((e) => e.assign.block === "cell")) {
        // A paired compare's second episodes wait for their pair's cell, which may be busy: look past as
        // many of them as there are connected cells, so that they do not crowd out what an idle cell could take.
        const waiting = await pendingOf(cells.length + connectedIds.size);
        // The cells of these episodes' pairs only, not the run's every pair: this runs at every pass.
        const pairs = waiting.flatMap((e) => (e.assign.block === "cell" && e.assign.pair !== undefined ? [e.assign.pair] : []));
        const blocking = blockPairsByCell(waiting, await listCellsOfPairs(db, run.id, pairs), connectedIds);
        cellOf = blocking.cellOf;
        offered = blocking.offered.filter((e) => !cellOf.has(e.id) || idleIds.has(cellOf.get(e.id)!));
      }
      // Units may differ in tier and class: only the prefix whose per-unit estimates fit is offered,
      // so whichever of them the matching skips, what is assigned fits.
      const affordable = options.budget ? await options.budget.episodeAllowance(run.id, offered, db, run) : Infinity;
      const chosen = offered.slice(0, Math.max(0, affordable));
      const episodePins: Record<string, CellPin> = {};
      for (const e of chosen) {
        const unit = run.units[e.unit];
        const image = containerImageOf(unit.policy);
        const cellId = cellOf.get(e.id);
        episodePins[e.id] = {
          model: unit.model, firmware: unit.firmware, environment: unit.environment, instruments: await instrumentsOfTask(taskKinds, taskReads, unit.task),
          ...(image ? { image } : {}), ...(cellId ? { cellId } : {}),
        };
        offeredEpisodes.set(e.id, { unit, row: e });
      }
      const schedulable: SchedulableRun = {
        id: run.id, priority: run.priority, created: run.created, model: run.plan.model, firmware: run.plan.firmware, environment: run.plan.environment,
        pendingEpisodeIds: chosen.map((e) => e.id), episodePins, limit: Math.min(cells.length, chosen.length),
      };
      const mine = planAssignments([schedulable], left);
      planned.push(...mine);
      const taken = new Set(mine.map((a) => a.cellId));
      left = left.filter((c) => !taken.has(c.cellId));
    }

    const taskJsonCache = new Map<string, string | undefined>();
    const jobs: Array<{ run: RunRecord; episodeId: string; cellId: string; taskJson: string; offered: { unit: RunUnit; row: EpisodeRecord } }> = [];
    for (const assignment of planned) {
      const run = byId.get(assignment.runId)!;
      const offered = offeredEpisodes.get(assignment.episodeId)!;
      const task = offered.unit.task;
      if (!taskJsonCache.has(task)) taskJsonCache.set(task, await taskJsonOf(taskReads, task));
      const taskJson = taskJsonCache.get(task);
      if (taskJson === undefined) {
        logger.error(`scheduler: run ${run.id} pins task ${task}, which is not in the tasks table; its episodes stay pending`);
        continue;
      }
      jobs.push({ run, episodeId: assignment.episodeId, cellId: assignment.cellId, taskJson, offered });
    }

    // Each assignment is its own transaction; a few run side by side, so that on PostgreSQL their round
    // trips and commits overlap on pooled connections instead of queueing one behind the other (on
    // SQLite they take the store's lock in turn). Each plans a different episode for a different cell;
    // two of one run meet at the run's lock.
    let assigned = 0;
    let next = 0;
    const worker = async () => {
      while (next < jobs.length) {
        const job = jobs[next++]!;
        const message = await assignOne(job.run, job.episodeId, job.cellId, job.taskJson, job.offered);
        if (!message) {
          // The episode went meanwhile (another coordinator's pass claimed it, or its run ended): the cell
          // is still free, so another pass here matches it against what is pending now, rather than the
          // periodic one. That pass plans other episodes: what is no longer pending is not offered again.
          if (claimsAlone(job.run)) kickLocal();
          continue;
        }
        const session = registry.session(job.cellId);
        registry.setAssigned(job.cellId, message.episodeId, job.run.id);
        // NOTE: if the write is lost because the stream just died, the disconnect handler requeues the
        // episode (the store says this cell holds it).
        session?.send({ assignEpisode: message });
        metrics?.episodesAssigned.inc();
        assigned += 1;
      }
    };
    const outcomes = await Promise.allSettled(Array.from({ length: Math.min(ASSIGNMENTS_IN_FLIGHT, jobs.length) }, worker));
    const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === "rejected");
    if (failed) throw failed.reason;
    return assigned;
  }

  /**
   * Whether the run's claims move nothing but the episode: one guarded statement, no transaction, no run
   * lock (claimPendingEpisodeOfStartedRun says why that is safe), so a failed claim means the episode is
   * no longer pending. A queued run moves with its claim, and a capped run's room is checked with it, in
   * a transaction under the run's lock.
   */
  function claimsAlone(run: RunRecord): boolean {
    return !isCapped(run) && run.status !== "queued";
  }

  /** A run whose claims the budget rules check (its request sets max_budget_usd). */
  function isCapped(run: RunRecord): boolean {
    return options.budget !== undefined && typeof (run.request as { max_budget_usd?: unknown }).max_budget_usd === "number";
  }

  /** Commits one assignment (and a queued run's move to scheduling); returns the message to send. */
  async function assignOne(run: RunRecord, episodeId: string, cellId: string, taskJson: string, offered: { unit: RunUnit; row: EpisodeRecord }): Promise<AssignEpisode | undefined> {
    const at = now().toISOString();
    const capped = isCapped(run);
    const episode = claimsAlone(run) ? await claimPendingEpisodeOfStartedRun(db, episodeId, cellId, at) : await transact(db, async (tx) => {
      // Another coordinator on the database may have spent the run's room since this pass read
      // it; under the run's lock the check is exact.
      let status: RunStatus | undefined;
      if (capped) {
        const locked = await lockAndGetRun(tx, run.id);
        if (!locked || await options.budget!.episodeAllowance(run.id, [offered.row], tx, locked) < 1) return undefined;
        status = locked.status;
      } else {
        status = await lockRunStatus(tx, run.id);
        if (status === undefined) return undefined;
      }
      const claimed = await claimPendingEpisode(tx, episodeId, cellId, at);
      if (claimed) await lifecycle.scheduled(tx, run.id, cellId, status);
      return claimed;
    }, { logger });
    if (!episode) return undefined;
    const attempt = episode.attempt;
    const { unit, row } = offered;
    const request = run.request as { perturbation?: object; interventions?: string; instructions?: unknown; judge?: unknown };
    // The run's interventions mode rides in perturbation_json (absent means "none"; see the agent's assignment.ts).
    const perturbation = unit.perturbation ?? request.perturbation ?? {};
    const interventions = request.interventions && request.interventions !== "none" ? { interventions: request.interventions } : {};
    const replaySpec = row.assign.replay_spec ?? run.plan.replay_spec;
    return {
      episodeId,
      runId: run.id,
      index: episode.idx,
      attempt,
      of: run.episodesTotal,
      robot: unit.robot,
      environment: unit.environment,
      // The run's judge (docs/judges.md) rides in task_json under `judge`, as the cell reads it (protocol/judge/judge-spec.ts).
      taskJson: withJudge(withInstructionSet(taskJson, request), request),
      policyJson: JSON.stringify(policyForCell(unit.policy ?? {}, run.resolvedPins.models)),
      perturbationJson: JSON.stringify({ ...perturbation, ...interventions }),
      seed: episode.seed,
      controlRateHz: run.plan.control_rate_hz,
      maxDurationS: run.plan.max_duration_s,
      idleEndS: run.plan.idle_end_s ?? 0,
      replaySpecJson: replaySpec ? JSON.stringify(replaySpec) : "",
    };
  }

  // Single flight (async/single-flight.ts): a pass never overlaps another (each awaits the store); a kick during
  // a pass asks for one more pass after it, however many kicks arrive meanwhile. Once stopped, nothing more runs.
  // `last`: what the latest pass did, for runPass() (the one whose flight ends is the one after the call).
  let last: { assigned: number } | { error: unknown } = { assigned: 0 };
  const passes = singleFlight(async () => {
    last = { assigned: 0 };
    if (stopped) return;
    try {
      last = { assigned: await pass() };
    } catch (error) {
      last = { error };
      throw error;
    }
  }, (error) => logger.error(`scheduler: pass failed: ${(error as Error).stack ?? error}`));

  function safePass(): Promise<void> {
    return stopped ? Promise.resolve() : passes.run();
  }

  function kickLocal(): void {
    if (pending || stopped) return;
    pending = setImmediate(() => {
      pending = undefined;
      void safePass();
    });
  }

  let peersKicked = false;
  function kick(): void {
    kickLocal();
    if (!options.peers || peersKicked || stopped) return;
    peersKicked = true;
    setImmediate(() => {
      peersKicked = false;
      try {
        options.peers?.kick();
      } catch (error) {
        logger.warn(`scheduler: could not nudge the other coordinators (${(error as Error).message}); their periodic pass picks the work up`);
      }
    });
  }

  return {
    kick,
    kickLocal,
    async episodeMetered(runId, run, account) {
      try {
        await options.budget?.afterEpisodeMetered(runId, run, account);
      } catch (error) {
        logger.error(`scheduler: budget check of run ${runId} failed: ${(error as Error).stack ?? error}`);
      }
      kickLocal();
    },
    async runPass() {
      if (stopped) return 0;
      await passes.run();
      const outcome = last;
      if ("error" in outcome) throw outcome.error;
      return outcome.assigned;
    },
    waitingReason: (runId) => waits.get(runId),
    start() {
      stopped = false;
      timer ??= setInterval(() => void safePass(), intervalMs);
      timer.unref();
    },
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = undefined;
      if (pending) clearImmediate(pending);
      pending = undefined;
      // The pass in progress finishes (its transaction commits or rolls back) before the store closes.
      await passes.idle();
    },
  };
}

/**
 * The policy as the cell receives it: a checkpoint policy carries the model its run pinned
 * (`checkpoint: {id, sha256, bytes}`), which the cell fetches over its link and checks by hash.
 */
export function policyForCell(policy: Record<string, unknown>, models: Record<string, { id: string; sha256: string; bytes: number }> | undefined): Record<string, unknown> {
  if (policy.type !== "checkpoint" || typeof policy.hf !== "string") return policy;
  const pinned = models?.[policy.hf];
  return pinned ? { ...policy, checkpoint: { id: pinned.id, sha256: pinned.sha256, bytes: pinned.bytes } } : policy;
}
