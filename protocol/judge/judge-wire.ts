/**
 * The judge wire (docs/judges.md): what Assay sends a success classifier about a finished episode,
 * and what it must answer. Both sides import this file: the cell agent, which calls the judge after
 * an episode, and the coordinator, which pre-flights it at submission.
 *
 * Request: POST <url>, `content-type: application/json`,
 *   {"task": "<name or revision>", "instruction": "<text>" | null, "cell": "<cell id>", "preflight": false,
 *    "frames": [{"camera": "top", "width": 640, "height": 480, "jpeg_base64": "<base64>"}, ...]}
 * (the episode's final frame of each camera, at most JUDGE_MAX_CAMERAS, each at most JUDGE_MAX_FRAME_BYTES).
 * Answer: 200 `{"success": true | false, "confidence": <0..1>, "reason"?: "<text>"}`, at most
 * JUDGE_MAX_REPLY_BYTES. Anything else is a judge failure: the episode then goes to a person.
 */

/** Cameras whose final frame a request carries, at most. */
export const JUDGE_MAX_CAMERAS = 8;
/** Bytes of one JPEG frame, at most (a frame that is larger is left out and the request says so in `omitted`). */
export const JUDGE_MAX_FRAME_BYTES = 4 * 1024 * 1024;
/** Bytes of the judge's answer, at most; a longer answer is a failure. */
export const JUDGE_MAX_REPLY_BYTES = 64 * 1024;
/** Characters of the judge's `reason` kept. */
export const JUDGE_REASON_MAX_CHARS = 500;

export interface JudgeFrame {
  camera: string;
  width: number;
  height: number;
  jpeg: Uint8Array;
}

export interface JudgeRequest {
  task: string;
  instruction: string | null;
  cell: string;
  frames: readonly JudgeFrame[];
  /** True only for the coordinator's pre-flight at submission. */
  preflight?: boolean;
}

export interface JudgeVerdict {
  success: boolean;
  /** In [0, 1]. */
  confidence: number;
  reason: string | null;
}

/** A judge answer that is not a verdict, or a judge that did not answer; `kind` says which. */
export class JudgeError extends Error {
  constructor(readonly kind: "unreachable" | "timeout" | "http_status" | "bad_reply", message: string) {
    super(message);
    this.name = "JudgeError";
  }
}

/** The request body (JSON text); frames beyond the bounds are left out and named in `omitted`. */
export function encodeJudgeRequest(request: JudgeRequest): string {
  const omitted: string[] = [];
  const frames = [];
  for (const frame of request.frames) {
    if (frames.length >= JUDGE_MAX_CAMERAS) omitted.push(`${frame.camera}: more than ${JUDGE_MAX_CAMERAS} cameras`);
    else if (frame.jpeg.byteLength > JUDGE_MAX_FRAME_BYTES) omitted.push(`${frame.camera}: ${frame.jpeg.byteLength} bytes, over ${JUDGE_MAX_FRAME_BYTES}`);
    else frames.push({ camera: frame.camera, width: frame.width, height: frame.height, jpeg_base64: Buffer.from(frame.jpeg).toString("base64") });
  }
  return JSON.stringify({
    task: request.task, instruction: request.instruction, cell: request.cell, preflight: request.preflight ?? false, frames,
    ...(omitted.length > 0 ? { omitted } : {}),
  });
}

const shown = (text: string) => JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}...` : text);

/** Reads a judge's answer; throws JudgeError("bad_reply") with a plain sentence quoting what came. */
export function parseJudgeVerdict(text: string): JudgeVerdict {
  if (text.length > JUDGE_MAX_REPLY_BYTES) throw new JudgeError("bad_reply", `the judge's answer is ${text.length} characters, over the ${JUDGE_MAX_REPLY_BYTES} allowed`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new JudgeError("bad_reply", `the judge's answer is not JSON: ${shown(text)}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new JudgeError("bad_reply", `the judge must answer a JSON object {"success", "confidence"}; got ${shown(text)}`);
  const v = value as Record<string, unknown>;
  if (typeof v.success !== "boolean") throw new JudgeError("bad_reply", `the judge's "success" must be true or false; got ${shown(JSON.stringify(v.success) ?? "nothing")}`);
  if (typeof v.confidence !== "number" || !Number.isFinite(v.confidence) || v.confidence < 0 || v.confidence > 1) {
    throw new JudgeError("bad_reply", `the judge's "confidence" must be a number from 0 to 1; got ${shown(JSON.stringify(v.confidence) ?? "nothing")}`);
  }
  const reason = typeof v.reason === "string" && v.reason !== "" ? v.reason.slice(0, JUDGE_REASON_MAX_CHARS) : null;
  return { success: v.success, confidence: v.confidence, reason };
}
