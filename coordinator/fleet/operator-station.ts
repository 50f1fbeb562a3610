/**
 * What a person at the operator station can do to a cell (the /v1/cells/{cell_id} operator routes):
 * confirm the scene a waiting reset asked for, label a finished episode, help an episode paused for an
 * intervention (intervene, then intervene-done), abort the cell's current episode, and mark the
 * cell's previous episode invalid. Answers travel to the cell as OperatorAnswer (relayed through
 * the coordinator holding its stream); an invalidation is a store move (done -> pending) of a run
 * that still runs, after which the scheduler gives the episode out again.
 */
import { AssayError } from "../errors/assay-error.js";
import { INVALID_REASON_WORDS, type InvalidReason } from "../domain/invalid-reasons.js";
import { isTerminal } from "../domain/run-state.js";
import { q } from "../runs/field-checks.js";
import { forgetArtifactsOfEpisode } from "../store/artifacts-repo.js";
import type { Db } from "../store/database.js";
import { invalidateEpisode, lastFinishedEpisodeOfCell } from "../store/episodes-repo.js";
import { getRun, lockRun } from "../store/runs-repo.js";
import { transact } from "../store/tx.js";
import type { CoordinatorMessage } from "../../protocol/gen/cell.js";
import type { ConnectedCell, FleetView } from "../cells/fleet-view.js";

export interface OperatorStationOptions {
  db: Db;
  /** The whole fleet, as GET /v1/cells lists it (attention included). */
  fleet: FleetView;
  /** Writes a message on the cell's stream here or through the coordinator holding it; false when connected nowhere. */
  sendToCell(cellId: string, message: CoordinatorMessage): Promise<boolean>;
  scheduler: { kick(): void };
  now: () => Date;
  logger: { info(message: string): void };
}

/** The episode a person marked invalid, as the API answers it. */
export interface Invalidation {
  episodeId: string;
  runId: string;
  index: number;
  attempt: number;
  reason: InvalidReason;
  note: string | null;
  outcome: "success" | "failure" | null;
}

export interface OperatorStation {
  /** The scene is set: the cell's waiting reset goes on. Returns the episode it was for. */
  confirmScene(cellId: string, episodeId?: string): Promise<{ episodeId: string }>;
  /** A person is at the cell to help the episode paused for an intervention: the arm stays held until `interventionDone`. */
  intervene(cellId: string, episodeId?: string): Promise<{ episodeId: string }>;
  /** The person stepped back: the held episode goes on, its intervention recorded with `note`. */
  interventionDone(cellId: string, input: { note: string | null; episodeId?: string }): Promise<{ episodeId: string }>;
  /** Ends the cell's current episode (it is interrupted as "operator_abort" and scheduled again). */
  abortEpisode(cellId: string, detail: string | null, episodeId?: string): Promise<{ episodeId: string }>;
  /** A person's success label for the episode the cell waits to have judged (its outcome is finalised with it). */
  labelEpisode(cellId: string, input: { success: boolean; progress: number | null; note: string | null; episodeId?: string }): Promise<{ episodeId: string }>;
  /** Marks the episode the cell finished last invalid: it runs again and never counts in n. */
  invalidatePrevious(cellId: string, input: { reason: InvalidReason; note: string | null; episodeId?: string }): Promise<Invalidation>;
}

export function createOperatorStation(options: OperatorStationOptions): OperatorStation {
  const { db, fleet, scheduler, now, logger } = options;

  const connected = async (cellId: string): Promise<ConnectedCell> => {
    const cell = (await fleet.connectedCells()).find((c) => c.cellId === cellId);
    if (!cell) throw new AssayError("contract_validation_failed", `cell ${q(cellId)} is not connected; it must be online (GET /v1/cells) before the station can answer it`);
    return cell;
  };
  const send = async (cellId: string, message: CoordinatorMessage): Promise<void> => {
    if (!await options.sendToCell(cellId, message)) {
      throw new AssayError("contract_validation_failed", `cell ${q(cellId)} went offline before the answer could be sent; check its link and try again`);
    }
  };

  /**
   * The cell's intervention attention in `phase` for `episodeId` (when given). Nothing to intervene in,
   * or a screen out of date, is a conflict with the cell's state: 409 (docs/errors.md).
   */
  const interventionOf = async (cellId: string, phase: "offered" | "holding", episodeId: string | undefined) => {
    const cell = await connected(cellId);
    const attention = cell.attention;
    const conflict = (message: string) => new AssayError("contract_validation_failed", message, { status: 409 });
    if (attention?.kind !== "intervene") {
      throw conflict(`cell ${q(cellId)} asks no help with an episode now (state ${cell.state}); nothing to ${phase === "offered" ? "intervene in" : "finish"}`);
    }
    if (episodeId !== undefined && episodeId !== attention.episodeId) {
      throw conflict(`cell ${q(cellId)} asks help with episode ${attention.episodeId}, not ${q(episodeId)}; reload the station and check the cell again`);
    }
    const now = attention.scene.phase === "holding" ? "holding" : "offered";
    if (now !== phase) {
      throw conflict(phase === "offered"
        ? `a person is already helping episode ${attention.episodeId} on cell ${q(cellId)}; press Done (POST /v1/cells/{cell_id}/intervene-done) when finished`
        : `nobody has pressed Intervene for episode ${attention.episodeId} on cell ${q(cellId)} yet; press Intervene (POST /v1/cells/{cell_id}/intervene) first`);
    }
    return attention;
  };

  return {
    async confirmScene(cellId, episodeId) {
      const cell = await connected(cellId);
      const attention = cell.attention;
      if (attention?.kind !== "reset") {
        throw new AssayError("contract_validation_failed", `cell ${q(cellId)} is not waiting for a scene reset (state ${cell.state}); nothing to confirm`);
      }
      if (episodeId !== undefined && episodeId !== attention.episodeId) {
        throw new AssayError("contract_validation_failed", `cell ${q(cellId)} waits for the scene of episode ${attention.episodeId}, not ${q(episodeId)}; reload the station and check the scene again`);
      }
      await send(cellId, { operatorAnswer: { episodeId: attention.episodeId, action: "scene_ready", detail: "" } });
      logger.info(`cell ${cellId}: scene of episode ${attention.episodeId} confirmed at the operator station`);
      return { episodeId: attention.episodeId };
    },

    async labelEpisode(cellId, input) {
      const cell = await connected(cellId);
      const attention = cell.attention;
      if (attention?.kind !== "label") {
        throw new AssayError("contract_validation_failed", `cell ${q(cellId)} is not waiting for a label (state ${cell.state}); nothing to label`);
      }
      if (input.episodeId !== undefined && input.episodeId !== attention.episodeId) {
        throw new AssayError("contract_validation_failed", `cell ${q(cellId)} waits for the label of episode ${attention.episodeId}, not ${q(input.episodeId)}; reload the station and judge again`);
      }
      const detail = JSON.stringify({ success: input.success, progress: input.progress, note: input.note });
      await send(cellId, { operatorAnswer: { episodeId: attention.episodeId, action: "label", detail } });
      logger.info(`cell ${cellId}: episode ${attention.episodeId} labelled ${input.success ? "success" : "failure"} at the operator station`);
      return { episodeId: attention.episodeId };
    },

    async intervene(cellId, episodeId) {
      const attention = await interventionOf(cellId, "offered", episodeId);
      await send(cellId, { operatorAnswer: { episodeId: attention.episodeId, action: "intervene", detail: "" } });
      logger.info(`cell ${cellId}: a person is helping episode ${attention.episodeId} (operator station)`);
      return { episodeId: attention.episodeId };
    },

    async interventionDone(cellId, input) {
      const attention = await interventionOf(cellId, "holding", input.episodeId);
      await send(cellId, { operatorAnswer: { episodeId: attention.episodeId, action: "intervene_done", detail: input.note ?? "" } });
      logger.info(`cell ${cellId}: the person's help with episode ${attention.episodeId} is done; the episode goes on (operator station)`);
      return { episodeId: attention.episodeId };
    },

    async abortEpisode(cellId, detail, episodeId) {
      const cell = await connected(cellId);
      const current = cell.attention?.episodeId || cell.episodeId;
      if (!current) throw new AssayError("contract_validation_failed", `cell ${q(cellId)} is running no episode (state ${cell.state}); nothing to abort`);
      if (episodeId !== undefined && episodeId !== current) {
        throw new AssayError("contract_validation_failed", `cell ${q(cellId)} is running episode ${current}, not ${q(episodeId)}; nothing was aborted`);
      }
      await send(cellId, { operatorAnswer: { episodeId: current, action: "abort", detail: detail ?? "" } });
      logger.info(`cell ${cellId}: episode ${current} aborted at the operator station${detail ? `: ${detail}` : ""}`);
      return { episodeId: current };
    },

    async invalidatePrevious(cellId, input) {
      const invalidation = await transact(db, async (tx) => {
        const previous = await lastFinishedEpisodeOfCell(tx, cellId);
        if (!previous) throw new AssayError("contract_validation_failed", `cell ${q(cellId)} has no finished episode to mark invalid`);
        if (input.episodeId !== undefined && input.episodeId !== previous.id) {
          throw new AssayError("contract_validation_failed", `the previous episode of cell ${q(cellId)} is ${previous.id}, not ${q(input.episodeId)} (already marked invalid, or another one finished since); nothing was changed`);
        }
        await lockRun(tx, previous.runId);
        const run = await getRun(tx, previous.runId);
        if (!run || isTerminal(run.status)) {
          throw new AssayError("contract_validation_failed", `episode ${previous.id} belongs to run ${previous.runId}, which has ended (${run?.status ?? "unknown"}); its result is final and the episode cannot be marked invalid`, { runId: previous.runId });
        }
        if (!await invalidateEpisode(tx, previous.id, { reason: input.reason, note: input.note, at: now().toISOString() })) {
          throw new AssayError("contract_validation_failed", `episode ${previous.id} is not finished any more; nothing was changed`);
        }
        await forgetArtifactsOfEpisode(tx, previous.id);
        return {
          episodeId: previous.id, runId: previous.runId, index: previous.idx, attempt: previous.attempt,
          reason: input.reason, note: input.note, outcome: previous.outcome,
        };
      });
      logger.info(`cell ${cellId}: episode ${invalidation.episodeId} (run ${invalidation.runId}) marked invalid at the operator station (${INVALID_REASON_WORDS[input.reason]}); it runs again`);
      scheduler.kick();
      return invalidation;
    },
  };
}
