/**
 * Synthetic episodes for export writer tests: real MCAP files written by the cell agent's own
 * recorder (with JPEG camera frames whose colour encodes the step), and the ExportRun/ExportEpisode
 * records an export worker would hand a writer.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import jpeg from "jpeg-js";
import { McapRecorder } from "../../cell-agent/recording/mcap-recorder.js";
import { VideoEncoder } from "../../cell-agent/recording/video-encoder.js";
import type { ExportEpisode, ExportRun, StoredFile } from "../../coordinator/exports/export-input.js";

export interface FixtureOptions {
  episodes?: number;
  /** Steps of episode i: `steps(i)`; default 20 + 3 i. */
  steps?: (episode: number) => number;
  cameras?: Array<{ name: string; width: number; height: number; everyNthStep?: number }>;
  jointNames?: string[];
  controlRateHz?: number;
  /** Outcome of episode i; default alternating success, failure. */
  outcome?: (episode: number) => "success" | "failure";
  /** The run's id; episodes are then named as the store names them (`ep_<id without run_>_<i>`). */
  runId?: string;
  /**
   * Also make each camera's episode video as a cell does (the agent's own VideoEncoder, one frame
   * per captured frame at the camera's rate) and list them in `videos`.
   */
  cellVideos?: boolean;
  /**
   * This camera's frame of this step is captured half a period late, outside any step (as when a
   * cell's joint read failed at that instant): the step has no frame of its own, the counts still agree.
   */
  strayFrame?: { episode: number; step: number; camera: string };
}

/** The grey level of a camera frame at a step: what a test can look for after decoding. */
export function frameLevel(step: number): number {
  return (step * 37) % 256;
}

function storedFile(path: string): StoredFile {
  const bytes = readFileSync(path);
  return { path, fileName: basename(path), bytes: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") };
}

export async function writeFixtureEpisodes(dir: string, options: FixtureOptions = {}): Promise<{ run: ExportRun; episodes: ExportEpisode[] }> {
  const count = options.episodes ?? 3;
  const jointNames = options.jointNames ?? ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"];
  const cameras = options.cameras ?? [{ name: "top", width: 32, height: 24 }, { name: "wrist", width: 16, height: 12, everyNthStep: 2 }];
  const rate = options.controlRateHz ?? 30;
  const periodNs = BigInt(Math.round(1e9 / rate));
  const runId = options.runId ?? "run_fixture0000000000001";
  const episodes: ExportEpisode[] = [];
  for (let i = 0; i < count; i++) {
    const episodeId = options.runId ? `ep_${runId.replace(/^run_/, "")}_${i}` : `ep_fixture_${i}`;
    const episodeDir = join(dir, runId, episodeId);
    mkdirSync(episodeDir, { recursive: true });
    const recorder = await McapRecorder.create(episodeDir, episodeId, { jointNames, cameraNames: cameras.map((c) => c.name) });
    const t0 = 5_000_000_000n + BigInt(i) * 100_000_000_000n;
    recorder.meta(t0, {
      phase: "start", firmware: "3.11", calibration_age_s: 120 + i, actuator_cycle_counts: {}, thermal_state: {}, seed: 1000 + i,
      perturbations_realized: { perturbation_rev: "assay-perturb@1", lighting: "dim", layout_jitter_mm: [1, -2] },
      cell_id: `cell-${i % 2}`, robot: "so101@3.11", environment: "tabletop-std@2", task: "pick-cube@v1",
    });
    const steps = options.steps?.(i) ?? 20 + 3 * i;
    const encoders = new Map(options.cellVideos ? cameras.map((c) => [c.name, new VideoEncoder(join(episodeDir, `${episodeId}.${c.name}.mp4`), rate / (c.everyNthStep ?? 1))]) : []);
    for (let k = 0; k < steps; k++) {
      const t = t0 + BigInt(k) * periodNs;
      const position = jointNames.map((_, j) => i + k / 100 + j / 10);
      recorder.jointStates(t, { tNs: t, positionRad: position, velocityRadS: jointNames.map(() => 0.1), currentA: jointNames.map(() => 0), temperatureC: jointNames.map(() => 30) });
      for (const camera of cameras) {
        if (k % (camera.everyNthStep ?? 1) !== 0) continue;
        const data = Buffer.alloc(camera.width * camera.height * 4, frameLevel(k));
        const stray = options.strayFrame && options.strayFrame.episode === i && options.strayFrame.step === k && options.strayFrame.camera === camera.name;
        const at = stray ? t + periodNs / 2n : t;
        const frame = { tNs: at, width: camera.width, height: camera.height, jpeg: jpeg.encode({ width: camera.width, height: camera.height, data }, 90).data };
        recorder.camera(at, camera.name, frame);
        await encoders.get(camera.name)?.addFrame(frame);
      }
      // Every fifth step holds (sends no command).
      if (k % 5 !== 4) recorder.jointTargets(t, position.map((p) => p + 0.01));
      recorder.objectPoses(t, t, [{ name: "cube", positionM: [0.2 + k / 1000, 0, 0.015], orientation: [0, 0, 0, 1] }]);
    }
    const outcome = options.outcome?.(i) ?? (i % 2 === 0 ? "success" : "failure");
    recorder.event(t0 + BigInt(steps) * periodNs, { tS: steps / rate, name: "episode_end", detail: outcome });
    recorder.meta(t0 + BigInt(steps) * periodNs, { phase: "end", outcome: { outcome } });
    const mcapPath = join(episodeDir, `${episodeId}.mcap`);
    await recorder.finish(mcapPath);
    const videos: Record<string, StoredFile> = {};
    for (const [camera, encoder] of encoders) {
      await encoder.finish();
      videos[camera] = storedFile(encoder.path);
    }
    const bytes = readFileSync(mcapPath);
    episodes.push({
      episodeId, index: i, outcome, failureCluster: outcome === "failure" ? "grasp_slip" : null, intervened: false,
      policySucceeded: outcome === "success", durationS: steps / rate, instruction: i % 2 === 0 ? "pick up the red cube" : "lift the cube",
      replaySpec: { environment: "tabletop-std@2", layout_seed: 1000 + i, lighting: "dim", distractors: "none" },
      cellId: `cell-${i % 2}`, seed: 1000 + i, robot: "so101@3.11", environment: "tabletop-std@2", task: "pick-cube@v1",
      mcap: { path: mcapPath, fileName: `${episodeId}.mcap`, bytes: statSync(mcapPath).size, sha256: createHash("sha256").update(bytes).digest("hex") },
      video: null,
      videos,
    });
  }
  const run: ExportRun = {
    runId, kind: "run", robot: "so101@3.11", environment: "tabletop-std@2", task: "pick-cube@v1", controlRateHz: rate,
    resolvedPins: { robot: "so101@3.11", environment: "tabletop-std@2", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
    created: "2026-11-24T10:00:00.000Z", completed: "2026-11-24T10:05:00.000Z", trainOnFailures: false,
  };
  return { run, episodes };
}
