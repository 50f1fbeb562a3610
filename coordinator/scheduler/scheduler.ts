/**
 * The scheduler: hands pending episodes to idle connected cells (see assignment-plan.ts for the
 * matching rule). A pass runs soon after every kick() (kicks in one tick coalesce into one pass)
 * and every `intervalMs` as a safety net, so a missed kick only delays work.
 */
import type { AssignEpisode } from "../../protocol/gen/cell.js";
import type { CellRegistry } from "../fleet/registry.js";
import type { FleetMetrics } from "../fleet/fleet-metrics.js";
import type { RunEvents } from "../runs/run-events.js";
import type { RunPlan, RunsRepo } from "../runs/run-results.js";
import type { RunStatus } from "../runs/run-state.js";
import type { Db } from "../store/database.js";
import { assignEpisode, getEpisode, listHeldEpisodes, listPendingEpisodes } from "../store/episodes-repo.js";
import { listPendingOfUnit, parseAssign, parseUnits, type RunUnit, type UnitEpisodeRow } from "../kinds/units.js";
import { planAssignments, type AvailableCell, type CellPin, type SchedulableRun } from "./assignment-plan.js";
import { resolveTaskKits } from "../kits/kit-physics.js";
import { withInstructionSet } from "../runs/instruction-set.js";

interface TaskSpecRow {
  spec: string;
  account_id: string | null;
}

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/**
 * Money rules the scheduler obeys (coordinator/billing/budget-guard.ts implements them): how many
 * more episodes a run may start, and what to re-check once an episode's robot time is metered.
 */
export interface AssignmentBudget {
  /**
   * How many episodes of the run may be assigned now; Infinity when nothing caps it. With `next`
   * (pending episodes in the order they are offered): how many of its first ones fit, each priced
   * at its unit's rates; without: counted over the run's pending episodes by index.
   */
  episodeAllowance(runId: string, next?: ReadonlyArray<{ unit: number | null }>): number;
  /** An episode of the run finished or was interrupted: its time is metered (may halt the run). */
  afterEpisodeMetered(runId: string): void;
}

export interface SchedulerOptions {
  db: Db;
  registry: CellRegistry;
  runEvents: RunEvents;
  runsRepo: RunsRepo;
  /** Base of the live stream URLs (`${streamsUrl}/cells/<cell>`), e.g. wss://streams.example. */
  streamsUrl: string;
  metrics?: FleetMetrics;
  logger?: Logger;
  /** Period of the safety pass; default 1000. */
  intervalMs?: number;
  /** Clock for timestamps; default () => new Date(). */
  now?: () => Date;
  /** Budget rules; default none (every pending episode may be assigned). */
  budget?: AssignmentBudget;
}

export interface Scheduler {
  /** Asks for a pass soon; many kicks in one tick make one pass. */
  kick(): void;
  /** An episode of `runId` finished or was interrupted: re-checks its budgets, then kicks. */
  episodeMetered(runId: string): void;
  /** Runs one pass now; returns how many episodes were assigned. */
  runPass(): number;
  start(): void;
  stop(): void;
}

interface OpenRunRow {
  id: string;
  status: RunStatus;
  priority: string;
  created: string;
  episodes_total: number;
  plan: string;
  request: string;
  resolved_pins: string;
  units: string | null;
}

export function createScheduler(options: SchedulerOptions): Scheduler {
  const { db, registry, runEvents, runsRepo, streamsUrl, metrics } = options;
  const logger = options.logger ?? console;
  const now = options.now ?? (() => new Date());
  const intervalMs = options.intervalMs ?? 1000;
  let pending: NodeJS.Immediate | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  function taskJsonOf(taskPin: string): string | undefined {
    const match = /^(.+)@v(\d+)$/.exec(taskPin);
    const row = match
      ? (db.prepare("SELECT spec, account_id FROM tasks WHERE name = ? AND version = ?").get(match[1], Number(match[2])) as TaskSpecRow | undefined)
      : (db.prepare("SELECT spec, account_id FROM tasks WHERE id = ?").get(taskPin) as TaskSpecRow | undefined);
    if (!row) return undefined;
    const spec = JSON.parse(row.spec) as object;
    // `kits`: the physical description of every kit/<name> the spec places (coordinator/kits/kit-physics.ts).
    return JSON.stringify({ ...spec, rev: match ? taskPin : null, kits: resolveTaskKits(db, row.account_id, spec) });
  }

  function runPass(): number {
    const held = new Set(listHeldEpisodes(db).map((e) => e.cell_id));
    const cells: AvailableCell[] = registry
      .connectedCells()
      .filter((c) => c.state === "idle" && !held.has(c.cellId) && !registry.assignedEpisodeOf(c.cellId))
      .map((c) => ({ cellId: c.cellId, model: c.model, firmware: c.firmware, environment: c.environment }));
    if (cells.length === 0) return 0;

    const rows = db
      .prepare("SELECT id, status, priority, created, episodes_total, plan, request, resolved_pins, units FROM runs WHERE status IN ('queued', 'scheduling', 'running')")
      .all() as OpenRunRow[];
    const byId = new Map(rows.map((r) => [r.id, r]));
    // Episodes of multi-unit runs offered this pass: their unit and assignment extras.
    const unitEpisodes = new Map<string, { unit: RunUnit; row: UnitEpisodeRow }>();
    const runs: SchedulableRun[] = rows.map((row) => {
      const plan = JSON.parse(row.plan) as RunPlan;
      const units = parseUnits(row.units);
      if (units.length > 0) {
        const offered = units.flatMap((_, u) => listPendingOfUnit(db, row.id, u, cells.length)).sort((a, b) => a.idx - b.idx);
        // Units may differ in tier and class: only the prefix whose per-unit estimates fit is offered,
        // so whichever of them the matching skips, what is assigned fits.
        const affordable = options.budget ? options.budget.episodeAllowance(row.id, offered) : Infinity;
        const pending = offered.slice(0, Math.max(0, affordable));
        const limit = Math.min(cells.length, pending.length);
        const episodePins: Record<string, CellPin> = {};
        for (const e of pending) {
          const unit = units[e.unit ?? 0];
          episodePins[e.id] = { model: unit.model, firmware: unit.firmware, environment: unit.environment };
          unitEpisodes.set(e.id, { unit, row: e });
        }
        return {
          id: row.id, priority: row.priority, created: row.created, model: plan.model, firmware: plan.firmware, environment: plan.environment,
          pendingEpisodeIds: pending.map((e) => e.id), episodePins, limit,
        };
      }
      const allowance = options.budget ? options.budget.episodeAllowance(row.id) : Infinity;
      const limit = Math.max(0, Math.min(cells.length, Math.floor(allowance)));
      return {
        id: row.id,
        priority: row.priority,
        created: row.created,
        model: plan.model,
        firmware: plan.firmware,
        environment: plan.environment,
        pendingEpisodeIds: limit === 0 ? [] : listPendingEpisodes(db, row.id, limit).map((e) => e.id),
      };
    });

    let assigned = 0;
    const taskJsonCache = new Map<string, string | undefined>();
    for (const planned of planAssignments(runs, cells)) {
      const run = byId.get(planned.runId)!;
      const ofUnit = unitEpisodes.get(planned.episodeId);
      const pins = ofUnit
        ? { robot: ofUnit.unit.robot, environment: ofUnit.unit.environment, task: ofUnit.unit.task }
        : (JSON.parse(run.resolved_pins) as { robot: string; environment: string; task: string });
      if (!taskJsonCache.has(pins.task)) taskJsonCache.set(pins.task, taskJsonOf(pins.task));
      const taskJson = taskJsonCache.get(pins.task);
      if (taskJson === undefined) {
        logger.error(`scheduler: run ${run.id} pins task ${pins.task}, which is not in the tasks table; its episodes stay pending`);
        continue;
      }
      const message = assignOne(run, planned.episodeId, planned.cellId, pins, taskJson, ofUnit);
      if (!message) continue;
      const session = registry.session(planned.cellId);
      registry.setAssigned(planned.cellId, message.episodeId);
      // NOTE: if the write is lost because the stream just died, the disconnect handler requeues the
      // episode (the store says this cell holds it).
      session?.send({ assignEpisode: message });
      metrics?.episodesAssigned.inc();
      assigned += 1;
    }
    return assigned;
  }

  /** Commits one assignment (and a queued run's move to scheduling); returns the message to send. */
  function assignOne(
    run: OpenRunRow, episodeId: string, cellId: string, pins: { robot: string; environment: string }, taskJson: string,
    ofUnit?: { unit: RunUnit; row: UnitEpisodeRow },
  ): AssignEpisode | undefined {
    const at = now().toISOString();
    const webrtc = `${streamsUrl}/cells/${cellId}`;
    const outcome = db.transaction(() => {
      const attempt = assignEpisode(db, episodeId, cellId, at);
      if (attempt === null) return undefined;
      let movedToScheduling = false;
      const current = runsRepo.getRunRow(db, run.id);
      if (current?.status === "queued") movedToScheduling = runsRepo.setRunStatus(db, run.id, "scheduling", { cell: cellId });
      return { attempt, movedToScheduling };
    })();
    if (!outcome) return undefined;
    if (outcome.movedToScheduling) {
      run.status = "scheduling";
      runEvents.publish({ runId: run.id, type: "status", data: { status: "scheduling", cell: cellId, webrtc } });
    }
    const episode = getEpisode(db, episodeId)!;
    const plan = JSON.parse(run.plan) as RunPlan;
    const request = JSON.parse(run.request) as { policy?: unknown; perturbation?: object; interventions?: string };
    // The run's interventions mode rides in perturbation_json (absent means "none"; see the agent's assignment.ts).
    const perturbation = ofUnit?.unit.perturbation ?? request.perturbation ?? {};
    const interventions = request.interventions && request.interventions !== "none" ? { interventions: request.interventions } : {};
    return {
      episodeId,
      runId: run.id,
      index: episode.idx,
      attempt: outcome.attempt,
      of: run.episodes_total,
      robot: pins.robot,
      environment: ofUnit ? ofUnit.unit.environment : plan.environment,
      taskJson: withInstructionSet(taskJson, request as { instructions?: unknown }),
      policyJson: JSON.stringify((ofUnit ? ofUnit.unit.policy : request.policy) ?? {}),
      perturbationJson: JSON.stringify({ ...perturbation, ...interventions }),
      seed: episode.seed,
      controlRateHz: plan.control_rate_hz,
      maxDurationS: plan.max_duration_s,
      replaySpecJson: ofUnit
        ? JSON.stringify(parseAssign(ofUnit.row.assign).replay_spec ?? null).replace(/^null$/, "")
        : JSON.stringify((plan as { replay_spec?: object }).replay_spec ?? null).replace(/^null$/, ""),
    };
  }

  function safePass(): void {
    if (stopped) return;
    try {
      runPass();
    } catch (error) {
      logger.error(`scheduler: pass failed: ${(error as Error).stack ?? error}`);
    }
  }

  function kick(): void {
    if (pending || stopped) return;
    pending = setImmediate(() => {
      pending = undefined;
      safePass();
    });
  }

  return {
    kick,
    episodeMetered(runId) {
      try {
        options.budget?.afterEpisodeMetered(runId);
      } catch (error) {
        logger.error(`scheduler: budget check of run ${runId} failed: ${(error as Error).stack ?? error}`);
      }
      kick();
    },
    runPass,
    start() {
      stopped = false;
      timer ??= setInterval(safePass, intervalMs);
      timer.unref();
    },
    stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = undefined;
      if (pending) clearImmediate(pending);
      pending = undefined;
    },
  };
}
