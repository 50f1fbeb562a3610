/**
 * Ground truth for simulator recalibration (verify `return_ground_truth`), derived from a stored
 * episode MCAP: motion-capture 6-DoF poses of every tracked body over time, and per control step
 * the commanded joint targets beside the measured joint states. One JSON file per scenario
 * episode, schema `assay.ground_truth/1`:
 *
 * ```
 * { schema: "assay.ground_truth/1", run_id, episode_id, scenario_id, robot, environment, task,
 *   cell_id, firmware, seed, source: {file_name, sha256},
 *   frames: {world, orientation, joints, time},
 *   objects: { <name>: { t_s: [n], position_m: [n][3], orientation_xyzw: [n][4] } },
 *   joints: { names: [d], t_s: [m], commanded_rad: [m][d] | null rows, measured_rad: [m][d],
 *             velocity_rad_s: [m][d] } }
 * ```
 *
 * Conventions (also written into `frames`): positions in the cell's world frame in metres (x, y on
 * the table, z up; the frame the mocap ground plane is calibrated to, docs/mocap.md); orientations
 * as unit quaternions x, y, z, w of the body in that frame; joint angles in radians in the robot's
 * joint order (`names`). Times are seconds from the episode's first control step (t0, whose agent
 * clock value is `frames.time.t0_ns`): object samples at their motion-capture timestamps, joint rows
 * at their control step. Row k of `joints` is one control step: `measured_rad[k]` is what the step
 * read, `commanded_rad[k]` the target it sent (null when the step sent none); the command of row k
 * was computed from row k and first shows in row k + 1. `gripper` in `objects` is the fingertip.
 */
import { RecordingTopic } from "../../protocol/recording/recording-layout.js";
import { openRecordingReader } from "../../protocol/recording/recording-reader.js";
import type { RandomReadable } from "../storage/object-readable.js";

export const GROUND_TRUTH_SCHEMA = "assay.ground_truth/1";
/** The MCAP channels the file is derived from. */
export const GROUND_TRUTH_SOURCE_CHANNELS = [RecordingTopic.objectPoses, RecordingTopic.jointTargets, RecordingTopic.jointStates, RecordingTopic.meta];

export interface GroundTruthObject {
  t_s: number[];
  position_m: Array<[number, number, number]>;
  orientation_xyzw: Array<[number, number, number, number]>;
}

export interface GroundTruth {
  schema: typeof GROUND_TRUTH_SCHEMA;
  run_id: string;
  episode_id: string;
  scenario_id: number | null;
  robot: string | null;
  environment: string | null;
  task: string | null;
  cell_id: string | null;
  firmware: string | null;
  seed: number | null;
  source: { file_name: string; sha256: string };
  frames: { world: string; orientation: string; joints: string; time: { unit: "s"; t0_ns: string; description: string } };
  objects: Record<string, GroundTruthObject>;
  joints: {
    names: string[];
    t_s: number[];
    commanded_rad: Array<number[] | null>;
    measured_rad: number[][];
    velocity_rad_s: number[][];
  };
}

export interface GroundTruthSource {
  runId: string;
  episodeId: string;
  /** Index of the scenario in the verify run's `scenarios.source`. */
  scenarioId: number | null;
  /** The MCAP's bytes: a stored object (objectReadable) or a local file (fileReadable). */
  mcap: RandomReadable;
  mcapFileName: string;
  mcapSha256: string;
}

type Stamp = { sec: number; nsec: number };
const stampNs = (t: Stamp | undefined, fallback: bigint) => (t ? BigInt(t.sec) * 1_000_000_000n + BigInt(t.nsec) : fallback);
const seconds = (tNs: bigint, t0Ns: bigint) => Number(tNs - t0Ns) / 1e9;
const stringOrNull = (v: unknown) => (typeof v === "string" ? v : null);

/** Reads the episode's MCAP and builds its ground truth; throws when the file is not a readable MCAP. */
export async function deriveGroundTruth(source: GroundTruthSource): Promise<GroundTruth> {
  // Either recording layout (protocol/recording/recording-reader.ts); the file's SHA-256 was verified at upload, so chunk CRCs are not re-checked.
  const reader = await openRecordingReader(source.mcap);
  const decoder = new TextDecoder();
  let startMeta: Record<string, unknown> = {};
  let names: string[] = [];
  const rows: Array<{ tNs: bigint; measured: number[]; velocity: number[]; commanded: number[] | null }> = [];
  const poses: Array<{ tNs: bigint; poses: Record<string, { position: { x: number; y: number; z: number }; orientation: { x: number; y: number; z: number; w: number } }> }> = [];
  for await (const message of reader.readMessages({ topics: GROUND_TRUTH_SOURCE_CHANNELS, validateCrcs: false })) {
    const topic = reader.channelsById.get(message.channelId)!.topic;
    const body = JSON.parse(decoder.decode(message.data)) as Record<string, any>;
    if (topic === RecordingTopic.meta) {
      if (body.phase === "start") startMeta = body;
    } else if (topic === RecordingTopic.jointStates) {
      if (names.length === 0 && Array.isArray(body.name)) names = body.name;
      rows.push({ tNs: message.logTime, measured: body.position ?? [], velocity: body.velocity ?? [], commanded: null });
    } else if (topic === RecordingTopic.jointTargets) {
      // A step's target belongs to the latest measured row (the agent reads before it commands).
      const row = rows.at(-1);
      if (row) row.commanded = body.position ?? null;
    } else if (topic === RecordingTopic.objectPoses) {
      poses.push({ tNs: stampNs(body.timestamp as Stamp | undefined, message.logTime), poses: body.poses ?? {} });
    }
  }
  const t0Ns = rows[0]?.tNs ?? poses[0]?.tNs ?? 0n;
  const objects: Record<string, GroundTruthObject> = {};
  for (const frame of poses) {
    for (const [name, pose] of Object.entries(frame.poses)) {
      const track = (objects[name] ??= { t_s: [], position_m: [], orientation_xyzw: [] });
      track.t_s.push(seconds(frame.tNs, t0Ns));
      track.position_m.push([pose.position.x, pose.position.y, pose.position.z]);
      track.orientation_xyzw.push([pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w]);
    }
  }
  return {
    schema: GROUND_TRUTH_SCHEMA,
    run_id: source.runId,
    episode_id: source.episodeId,
    scenario_id: source.scenarioId,
    robot: stringOrNull(startMeta.robot),
    environment: stringOrNull(startMeta.environment),
    task: stringOrNull(startMeta.task),
    cell_id: stringOrNull(startMeta.cell_id),
    firmware: stringOrNull(startMeta.firmware),
    seed: typeof startMeta.seed === "number" ? startMeta.seed : null,
    source: { file_name: source.mcapFileName, sha256: source.mcapSha256 },
    frames: {
      world: "cell world frame, metres: x and y on the table, z up (the mocap ground plane's calibration)",
      orientation: "unit quaternion [x, y, z, w] of the body in the world frame",
      joints: "radians in the robot's joint order (joints.names); velocities rad/s",
      time: {
        unit: "s",
        t0_ns: t0Ns.toString(),
        description: "seconds from the first control step; objects at their motion-capture timestamps, joint rows at their control step (row k's command shows first in row k+1)",
      },
    },
    objects,
    joints: {
      names,
      t_s: rows.map((r) => seconds(r.tNs, t0Ns)),
      commanded_rad: rows.map((r) => r.commanded),
      measured_rad: rows.map((r) => r.measured),
      velocity_rad_s: rows.map((r) => r.velocity),
    },
  };
}

/** The file name of an episode's ground truth, beside its MCAP. */
export function groundTruthFileName(episodeId: string): string {
  return `${episodeId}.ground_truth.json`;
}
