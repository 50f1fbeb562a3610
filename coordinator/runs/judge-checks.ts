/**
 * A run's (or pilot's) `judge` at submission (docs/judges.md): the task must have a success predicate
 * judged by a person (operator.success), which is what the judge decides first; and the judge must
 * answer a pre-flight request (a synthetic frame per camera of the scene) with a verdict, like an
 * endpoint policy's pre-flight. Both refuse with 422 contract_validation_failed in plain words.
 */
import jpeg from "jpeg-js";
import { callJudge } from "../../protocol/judge/judge-client.js";
import { JUDGE_DEFAULTS } from "../../protocol/judge/judge-spec.js";
import { JudgeError } from "../../protocol/judge/judge-wire.js";
import { splitPersonJudged } from "../../protocol/predicates/index.js";
import { contract, isPlainObject, q } from "./field-checks.js";

/** The shape of a validated `judge` field (run-schemas.ts Judge). */
export interface JudgeField {
  url: string;
  confidence_threshold?: number;
  audit_fraction?: number;
  timeout_s?: number;
}

/** Refuses a judge for a task that no person judges (its predicates are all the instruments'). */
export function checkJudgeTasks(judge: unknown, tasks: ReadonlyArray<{ rev: string; spec: Record<string, unknown> }>): void {
  if (judge === undefined) return;
  for (const { rev, spec } of tasks) {
    const predicates = Array.isArray(spec.success_predicates) ? (spec.success_predicates as Array<Record<string, string>>) : [];
    let personJudged: string[] = [];
    try {
      personJudged = splitPersonJudged({ success_predicates: predicates }).personJudged;
    } catch {
      // The task's own validation reports malformed predicates.
    }
    if (personJudged.length === 0) {
      contract(`judge: task ${rev} has no success predicate judged by a person (operator.success), so there is nothing for a judge to decide; ` +
        `add one (e.g. {"judged": "operator.success"}) to the task's success_predicates, or submit without judge`);
    }
  }
}

let syntheticFrame: Uint8Array | undefined;
/** A small mid-grey JPEG: what a pre-flight shows the judge for each camera. */
function preflightJpeg(): Uint8Array {
  if (!syntheticFrame) {
    const width = 64, height = 48;
    syntheticFrame = new Uint8Array(jpeg.encode({ data: Buffer.alloc(width * height * 4, 128), width, height }, 80).data);
  }
  return syntheticFrame;
}

/**
 * Sends the judge one pre-flight request (`preflight: true`, a synthetic frame per camera) and
 * refuses the submission unless it answers a verdict within its timeout (at most `maxTimeoutMs`).
 */
export async function preflightJudge(judge: unknown, o: { task: string; cameras: readonly string[]; maxTimeoutMs: number }): Promise<void> {
  if (!isPlainObject(judge)) return;
  const field = judge as unknown as JudgeField;
  const timeoutMs = Math.min(o.maxTimeoutMs, (field.timeout_s ?? JUDGE_DEFAULTS.timeout_s) * 1000);
  try {
    await callJudge(field.url, {
      task: o.task, instruction: null, cell: "", preflight: true,
      frames: o.cameras.map((camera) => ({ camera, width: 64, height: 48, jpeg: preflightJpeg() })),
    }, timeoutMs);
  } catch (error) {
    if (error instanceof JudgeError) {
      // What the URL answered is not echoed (only its status, or which field was wrong): the coordinator
      // must not become a way to read a service on its network (docs/security.md).
      const said = error.message.replace(/: ".*$/s, "");
      contract(`judge: pre-flight of ${q(field.url)} failed: ${said}; the judge must answer {"success": true|false, "confidence": 0..1} (docs/judges.md)`);
    }
    throw error;
  }
}

/** task_json for the cell with the run's judge added under `judge` (unchanged when the run has none). */
export function withJudge(taskJson: string, request: { judge?: unknown }): string {
  if (!isPlainObject(request.judge)) return taskJson;
  return JSON.stringify({ ...(JSON.parse(taskJson) as object), judge: request.judge });
}
