/**
 * The one interface every run kind implements (`run` included, as an ordinary kind). The registry
 * (coordinator/kinds/registry.ts) maps a kind's name to its module; nothing else switches on
 * `kind`. A kind declares its request body, plans its runs, reacts to progress, computes its
 * Result, and says what ending a run of it implies. Types only: a leaf.
 */
import type { ReplayMemo } from "./sequential-replay.js";
import type { z } from "zod";
import type { FirmwarePins } from "../../firmware-pins/pins.js";
import type { ErrorCode } from "../errors/codes.js";
import type { RunKindName, ValidatedRun, ValidateRunContext } from "../runs/run-request.js";
import type { TerminalRunStatus } from "../domain/run-state.js";
import type { Db } from "../store/database.js";
import type { Tx } from "../store/tx.js";
import type { RunPlan, RunRecord } from "../store/runs-repo.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";

/** What computing a Result may read. */
export interface KindResultContext {
  db: Db;
  pins: FirmwarePins;
  /** Public base of the /v1 API (no /v1, no trailing slash), for the Result's URLs. */
  baseUrl: string;
}

/**
 * What a kind may do while its run progresses: read and write in `tx`, the transaction that checks
 * completion (coordinator/store/tx.ts; notifications go on `tx.afterCommit`).
 */
export interface KindProgressContext extends Omit<KindResultContext, "db"> {
  tx: Tx;
  now: Date;
  /** Sequential tests as the run's previous progress left them (sequential-replay.ts); none: replayed from the start. */
  replays?: ReplayMemo;
}

/** What ending a run of a kind may do: read and write in `tx`, the transaction that ended it. */
export interface KindEndedContext extends Omit<KindResultContext, "db"> {
  tx: Tx;
  now: Date;
  status: TerminalRunStatus;
}

/** A kind's decision after an episode finished: go on (undefined), or stop the run with a spec code. */
export type KindDecision = undefined | { stop: { code: ErrorCode; message: string } };

/**
 * What the rest of the coordinator asks of a kind instead of testing its name: views, reports,
 * leaderboards, quotes and replays read these.
 */
export interface KindTraits {
  /**
   * Episodes belong to the run's units (every kind but `run`): an episode's view names its unit, the
   * run's view carries the kind's own fields, interventions are listed per unit.
   */
  hasUnits: boolean;
  /**
   * The units are policies set against each other (compare): each unit's policy is named by the unit
   * (never by the request's `policy_name`), titles say "A vs B", and two units may make paired boards.
   */
  comparesPolicies: boolean;
  /** The leaderboard a published run enters: one per robot of its suite, its first unit's task, or none. */
  leaderboard: "suite" | "task" | null;
  /** Rows of its paper table: one per unit of the Result, one per robot of its suite's scores, or the run's headline. */
  paperRows: "units" | "scores" | "headline";
  /** Heading of the first column of its paper table and report ("Policy" for a compare). */
  unitHeading: string;
  /** POST /v1/runs/{id}/checkpoints may push a new policy to it (threshold). */
  acceptsCheckpoints: boolean;
  /** POST /v1/runs/{id}/episodes/{id}/replay may replay its episodes (run). */
  replayable: boolean;
}

export interface RunKind {
  readonly name: RunKindName;
  readonly traits: KindTraits;
  /**
   * The shape of a POST /v1/runs body of this kind (a strict object; shared blocks from
   * coordinator/runs/run-schemas.ts): checked before `plan`, and the kind's part of the OpenAPI document.
   */
  readonly schema: z.ZodObject;
  /**
   * Validates a submission of this kind (`body` is a JSON object whose `kind` is this one) and
   * plans its units and episodes; throws the AssayError (422 naming the field) of the first problem.
   */
  plan(body: Record<string, unknown>, ctx: ValidateRunContext): Promise<ValidatedRun>;
  /** The run's Result from all of its episodes: partial while it runs or once stopped. */
  result(ctx: KindResultContext, run: RunRecord, episodes: readonly EpisodeRecord[]): Promise<Record<string, unknown>>;
  /**
   * After one of the run's episodes finished, before completion is checked: a sequential kind
   * decides here (cancelling what is pending, adding its next episode) or stops the run. It reads
   * in `ctx.tx` only the episodes its decision needs: it runs at every finish (and every stored
   * recording) of the run, so a read of the whole run here costs a run of N episodes O(N^2).
   */
  progress?(ctx: KindProgressContext, run: RunRecord): Promise<KindDecision>;
  /**
   * Once the run has ended (any terminal status), in the same transaction: durable consequences
   * such as webhook events in the outbox or gate decisions. Notifications go out after the commit.
   */
  onEnded?(ctx: KindEndedContext, run: RunRecord, result: Record<string, unknown>): Promise<void>;
  /**
   * For a kind that makes its episodes as it goes (threshold): the most one unit can make, which a
   * quote prices; undefined when the plan does not say (the quote then takes the planned total).
   */
  episodeCeilingPerUnit?(plan: RunPlan): number | undefined;
}
