/**
 * Scenario sources of a `verify` run: what a simulator flagged, turned into replay specs the cell
 * reproduces exactly (AssignEpisode.replay_spec_json), each with the simulated outcome.
 *
 * `source` is the export itself as a JSON string, or a data URL (`data:application/json;base64,...`
 * or `data:application/json,<percent-encoded>`). Formats (poses in the cell's world frame, metres):
 *
 * - `layout-replay`: `[{replay_spec, sim_outcome?}]`, or bare replay specs (an episode's
 *   `replay_spec` from GET /v1/runs/{id}/episodes: `objects` required).
 * - `isaac-lab-json`: `{"episodes": [{"success": bool, "objects": {"<name>": {"pos": [x, y, z],
 *   "quat": [w, x, y, z]}}, "lighting"?, "env_seed"?}]}`.
 * - `mujoco-keyframes-json`: `{"keyframes": [{"name"?, "success": bool, "bodies": {"<name>":
 *   {"pos": [x, y, z], "quat": [w, x, y, z]}}}]}` (MuJoCo's body pos/quat convention).
 * - `gazebo-sdf-poses`: `{"worlds": [{"result": "success"|"failure", "models": [{"name", "pose":
 *   "x y z roll pitch yaw"}]}]}` (SDF pose strings, radians).
 *
 * Object names must be initial-condition names of the task (`cube`); other names are distractors.
 * Anything that parses as none of these is 422 `scenario_format_invalid`, with the reason.
 */
import { boundedJson } from "../json/bounded-json.js";
import { AssayError } from "../errors/assay-error.js";

export const SCENARIO_FORMATS = ["layout-replay", "isaac-lab-json", "mujoco-keyframes-json", "gazebo-sdf-poses"] as const;
export type ScenarioFormat = (typeof SCENARIO_FORMATS)[number];

export interface Scenario {
  replaySpec: Record<string, unknown>;
  simOutcome: "success" | "failure" | null;
}

type Pose = [number, number, number, number];

function invalid(message: string): never {
  throw new AssayError("scenario_format_invalid", message);
}

/** The text of `source`: a JSON string as is, or the payload of a data URL. */
export function sourceText(source: unknown): string {
  if (typeof source !== "string" || source.length === 0) invalid(`scenarios.source must be the export as a JSON string or a data: URL; got ${boundedJson(source)}`);
  if (!source.startsWith("data:")) return source;
  const comma = source.indexOf(",");
  if (comma < 0) invalid(`scenarios.source is a data: URL without a "," before its payload`);
  const header = source.slice(5, comma);
  const payload = source.slice(comma + 1);
  try {
    return header.endsWith(";base64") ? Buffer.from(payload, "base64").toString("utf8") : decodeURIComponent(payload);
  } catch {
    invalid(`scenarios.source data: URL payload does not decode`);
  }
}

const round = (x: number, digits: number) => Number(x.toFixed(digits));

function vec3(where: string, value: unknown): [number, number, number] {
  if (!Array.isArray(value) || value.length !== 3 || value.some((v) => typeof v !== "number" || !Number.isFinite(v))) invalid(`${where} must be [x, y, z] numbers; got ${boundedJson(value)}`);
  return value as [number, number, number];
}

/** Yaw (degrees) of a unit quaternion [w, x, y, z]. */
function yawOfQuat(where: string, value: unknown): number {
  if (value === undefined) return 0;
  if (!Array.isArray(value) || value.length !== 4 || value.some((v) => typeof v !== "number")) invalid(`${where} must be [w, x, y, z]; got ${boundedJson(value)}`);
  const [w, x, y, z] = value as number[];
  return (Math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z)) * 180) / Math.PI;
}

function replayOf(environment: string, taskObjects: Record<string, string>, poses: Record<string, Pose>, lighting?: unknown): Record<string, unknown> {
  const objects: Record<string, { object: string; pose: Pose }> = {};
  const distractors: Array<{ object: string; pose: Pose }> = [];
  for (const [name, pose] of Object.entries(poses)) {
    const rounded: Pose = [round(pose[0], 5), round(pose[1], 5), round(pose[2], 5), round(pose[3], 3)];
    if (taskObjects[name]) objects[name] = { object: taskObjects[name], pose: rounded };
    else distractors.push({ object: name, pose: rounded });
  }
  for (const name of Object.keys(taskObjects)) if (!objects[name]) invalid(`a scenario has no pose for the task's object "${name}"`);
  return {
    environment, layout_seed: 0, lighting: typeof lighting === "string" ? lighting : "nominal", distractors: distractors.length ? "scenario" : "none",
    objects, distractor_objects: distractors, instruction: null,
  };
}

function outcomeOf(where: string, value: unknown): "success" | "failure" | null {
  if (value === undefined || value === null) return null;
  if (value === true || value === "success") return "success";
  if (value === false || value === "failure") return "failure";
  invalid(`${where} must be true/false or "success"/"failure"; got ${boundedJson(value)}`);
}

function listOf(where: string, value: unknown): Array<Record<string, unknown>> {
  if (!Array.isArray(value) || value.some((v) => typeof v !== "object" || v === null || Array.isArray(v))) invalid(`${where} must be an array of objects`);
  return value as Array<Record<string, unknown>>;
}

/**
 * Parses `source` in `format` into scenarios for `environment`; `taskObjects` maps the task's
 * initial-condition names to their objects. Throws scenario_format_invalid.
 */
export function parseScenarios(format: unknown, source: unknown, environment: string, taskObjects: Record<string, string>): Scenario[] {
  if (typeof format !== "string" || !(SCENARIO_FORMATS as readonly string[]).includes(format)) {
    invalid(`scenarios.format must be one of ${SCENARIO_FORMATS.join(", ")}; got ${boundedJson(format)}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(sourceText(source));
  } catch (error) {
    if (error instanceof AssayError) throw error;
    invalid(`scenarios.source is not JSON: ${(error as Error).message}`);
  }
  const f = format as ScenarioFormat;
  let scenarios: Scenario[];
  if (f === "layout-replay") {
    scenarios = listOf("layout-replay source", doc).map((item, i) => {
      const spec = (item.replay_spec ?? item) as Record<string, unknown>;
      if (typeof spec.objects !== "object" || spec.objects === null) invalid(`layout-replay scenario ${i} has no "objects" (a replay spec from an episode's replay_spec)`);
      for (const name of Object.keys(taskObjects)) if (!(spec.objects as Record<string, unknown>)[name]) invalid(`layout-replay scenario ${i} has no pose for the task's object "${name}"`);
      const { sim_outcome: _ignored, ...replay } = spec;
      return { replaySpec: { ...replay, environment }, simOutcome: outcomeOf(`scenario ${i} sim_outcome`, item.sim_outcome) };
    });
  } else if (f === "isaac-lab-json" || f === "mujoco-keyframes-json") {
    const key = f === "isaac-lab-json" ? "episodes" : "keyframes";
    const bodies = f === "isaac-lab-json" ? "objects" : "bodies";
    scenarios = listOf(`${f} ${key}`, (doc as Record<string, unknown> | null)?.[key]).map((item, i) => {
      const raw = item[bodies];
      if (typeof raw !== "object" || raw === null) invalid(`${f} ${key}[${i}] has no "${bodies}"`);
      const poses: Record<string, Pose> = {};
      for (const [name, body] of Object.entries(raw as Record<string, Record<string, unknown>>)) {
        const [x, y, z] = vec3(`${key}[${i}].${bodies}.${name}.pos`, body?.pos);
        poses[name] = [x, y, z, yawOfQuat(`${key}[${i}].${bodies}.${name}.quat`, body?.quat)];
      }
      return { replaySpec: replayOf(environment, taskObjects, poses, item.lighting), simOutcome: outcomeOf(`${key}[${i}].success`, item.success) };
    });
  } else {
    scenarios = listOf("gazebo-sdf-poses worlds", (doc as Record<string, unknown> | null)?.worlds).map((world, i) => {
      const poses: Record<string, Pose> = {};
      for (const model of listOf(`worlds[${i}].models`, world.models)) {
        const parts = String(model.pose ?? "").trim().split(/\s+/).map(Number);
        if (typeof model.name !== "string" || parts.length !== 6 || parts.some((v) => !Number.isFinite(v))) invalid(`worlds[${i}].models: each needs a name and an SDF pose "x y z roll pitch yaw"; got ${boundedJson(model)}`);
        poses[model.name as string] = [parts[0], parts[1], parts[2], (parts[5] * 180) / Math.PI];
      }
      return { replaySpec: replayOf(environment, taskObjects, poses), simOutcome: outcomeOf(`worlds[${i}].result`, world.result) };
    });
  }
  if (scenarios.length === 0) invalid(`scenarios.source (${f}) holds no scenario`);
  return scenarios;
}
