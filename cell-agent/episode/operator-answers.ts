/**
 * What a person pressed at the operator station, as the coordinator relays it (OperatorAnswer), applied to the
 * episode the cell runs: a label, "scene ready", Intervene / Done, or Abort. An answer for another episode, or one
 * nothing waits for, is logged and ignored, never an error: the station may be a click behind the cell.
 */
import type { OperatorAnswer } from "../../protocol/gen/cell.js";
import type { SceneReadyGate } from "../devices/scene/scene-ready-gate.js";
import type { InterventionGate } from "./intervention-gate.js";
import { parseOperatorLabel, type LabelGate, type OperatorLabel } from "./label-gate.js";
import { EpisodeAbort } from "./episode-abort.js";

export interface OperatorAnswerTargets {
  /** The episode the cell runs now, if any. */
  runningEpisodeId(): string | undefined;
  labelGate: LabelGate;
  sceneGate?: SceneReadyGate;
  interventionGate?: InterventionGate;
  /** Ends the running attempt (the runner holds the arm where it is). */
  abort(abort: EpisodeAbort): void;
  log(line: string): void;
}

export function applyOperatorAnswer(answer: OperatorAnswer, to: OperatorAnswerTargets): void {
  const { log } = to;
  const running = to.runningEpisodeId();
  if (running === undefined || answer.episodeId !== running) {
    log(`ignored the operator's "${answer.action}" for episode ${answer.episodeId}: the cell is ${running !== undefined ? `running episode ${running}` : "running no episode"}`);
    return;
  }
  if (answer.action === "label") {
    let label: OperatorLabel;
    try {
      label = parseOperatorLabel(answer.detail);
    } catch (error) {
      log(`ignored the operator's label for episode ${answer.episodeId}: ${(error as Error).message}`);
      return;
    }
    if (to.labelGate.answer(answer.episodeId, label)) log(`episode ${answer.episodeId} labelled at the operator station: ${label.success ? "success" : "failure"}${label.progress !== null ? `, progress ${label.progress}` : ""}`);
    else log(`ignored the operator's label for episode ${answer.episodeId}: no label is awaited`);
  } else if (answer.action === "scene_ready") {
    if (to.sceneGate?.confirm()) log(`scene reset of episode ${answer.episodeId} confirmed at the operator station`);
    else log(`ignored the operator station's "scene ready" for episode ${answer.episodeId}: no reset is waiting`);
  } else if (answer.action === "intervene" || answer.action === "intervene_done") {
    const pressed = answer.action === "intervene" ? to.interventionGate?.press(answer.episodeId) : to.interventionGate?.done(answer.episodeId, answer.detail.slice(0, 500));
    log(pressed
      ? `${answer.action === "intervene" ? "a person pressed Intervene: the arm stays held while they help" : "the person pressed Done: the episode goes on"} (episode ${answer.episodeId})`
      : `ignored the operator's "${answer.action}" for episode ${answer.episodeId}: no intervention ${answer.action === "intervene" ? "is offered" : "holds the arm"}`);
  } else if (answer.action === "abort") {
    log(`the operator aborted episode ${answer.episodeId} at the station${answer.detail ? `: ${answer.detail}` : ""}; holding position`);
    to.abort(new EpisodeAbort("operator_abort", answer.detail || "a person aborted the episode at the operator station"));
  } else {
    log(`ignored an operator answer with unknown action ${JSON.stringify(answer.action)}`);
  }
}
