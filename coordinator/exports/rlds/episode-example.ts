/**
 * One RLDS episode as one tf.train.Example: the control steps are collected as they are read, then
 * serialized with the keys `rlds-features.ts` declares. An episode is one record, so its steps are
 * held until it ends (frames are shared, not copied: a slow camera's repeated frame is one buffer);
 * the run as a whole never is.
 */
import type { ExportEpisode, ExportRun } from "../export-input.js";
import type { EpisodeStep } from "../episode-steps.js";
import { blackJpeg, type FrameSize, jpegSize } from "./jpeg-frames.js";
import type { FlatFeature } from "./rlds-features.js";
import type { RunLayout } from "./run-layout.js";
import { encodeExample, type ExamplePieces, type FeatureValues } from "./tf-example.js";

const utf8 = (text: string) => Buffer.from(text, "utf8");

export class EpisodeExampleBuilder {
  private readonly state: number[] = [];
  private readonly action: number[] = [];
  private readonly frames = new Map<string, Uint8Array[]>();
  /** The last frame checked per camera: a repeated frame is the same buffer, checked once. */
  private readonly checked = new Map<string, Uint8Array>();
  private readonly black = new Map<string, Uint8Array>();
  private stepCount = 0;

  constructor(
    private readonly run: ExportRun,
    private readonly episode: ExportEpisode,
    private readonly layout: RunLayout,
    private readonly declared: ReadonlyMap<string, FlatFeature>,
  ) {
    for (const camera of layout.cameras) this.frames.set(camera.name, []);
  }

  get steps(): number {
    return this.stepCount;
  }

  addStep(step: EpisodeStep): void {
    const dof = this.layout.jointNames.length;
    const where = `episode ${this.episode.episodeId} step ${step.index}`;
    if (step.state.length !== dof) throw new Error(`${where}: the joint state has ${step.state.length} positions, expected ${dof} (${this.layout.jointNames.join(", ")})`);
    if (step.action.length !== dof) throw new Error(`${where}: the joint target has ${step.action.length} positions, expected ${dof} (${this.layout.jointNames.join(", ")})`);
    this.state.push(...step.state);
    this.action.push(...step.action);
    for (const camera of this.layout.cameras) {
      const frame = step.images.get(camera.name);
      this.frames.get(camera.name)!.push(frame ? this.checkedFrame(camera.name, camera, frame, where) : this.blackFrame(camera.name, camera));
    }
    this.stepCount += 1;
  }

  /** The episode's serialized Example, as pieces that reference the frames (tf-example.ts). */
  finish(): ExamplePieces {
    const n = this.stepCount;
    const last = (value: number, otherwise: number) => Array.from({ length: n }, (_, i) => (i === n - 1 ? value : otherwise));
    const ep = this.episode;
    const features = new Map<string, FeatureValues>([
      ["steps/observation/state", { kind: "float", values: this.state }],
      ["steps/action", { kind: "float", values: this.action }],
      ["steps/reward", { kind: "float", values: last(ep.outcome === "success" ? 1 : 0, 0) }],
      ["steps/discount", { kind: "float", values: new Array<number>(n).fill(1) }],
      ["steps/is_first", { kind: "int64", values: Array.from({ length: n }, (_, i) => (i === 0 ? 1 : 0)) }],
      ["steps/is_last", { kind: "int64", values: last(1, 0) }],
      ["steps/is_terminal", { kind: "int64", values: last(1, 0) }],
      ["steps/language_instruction", { kind: "bytes", values: new Array<Uint8Array>(n).fill(utf8(ep.instruction)) }],
      ["episode_metadata/run_id", text(this.run.runId)],
      ["episode_metadata/episode_id", text(ep.episodeId)],
      ["episode_metadata/episode_index", { kind: "int64", values: [ep.index] }],
      ["episode_metadata/outcome", text(ep.outcome)],
      ["episode_metadata/policy_succeeded", { kind: "int64", values: [ep.policySucceeded ? 1 : 0] }],
      ["episode_metadata/intervened", { kind: "int64", values: [ep.intervened ? 1 : 0] }],
      ["episode_metadata/failure_cluster", text(ep.failureCluster ?? "")],
      ["episode_metadata/replay_spec", text(JSON.stringify(ep.replaySpec))],
      ["episode_metadata/cell_id", text(ep.cellId ?? "")],
      ["episode_metadata/seed", { kind: "int64", values: [ep.seed] }],
      ["episode_metadata/robot", text(ep.robot)],
      ["episode_metadata/environment", text(ep.environment)],
      ["episode_metadata/task", text(ep.task)],
    ]);
    for (const [camera, frames] of this.frames) features.set(`steps/observation/${camera}`, { kind: "bytes", values: frames });
    this.checkAgainstDeclared(features);
    return encodeExample(features);
  }

  private checkedFrame(camera: string, size: FrameSize, frame: Uint8Array, where: string): Uint8Array {
    if (this.checked.get(camera) === frame) return frame;
    const actual = jpegSize(frame);
    if (actual.width !== size.width || actual.height !== size.height) {
      throw new Error(
        `${where}: camera ${camera} sent a ${actual.width}x${actual.height} frame, but the dataset declares ` +
          `${size.width}x${size.height} (its first frame in the run); TFDS decodes every frame of a camera at one size`,
      );
    }
    this.checked.set(camera, frame);
    return frame;
  }

  private blackFrame(camera: string, size: FrameSize): Uint8Array {
    let frame = this.black.get(camera);
    if (!frame) this.black.set(camera, (frame = blackJpeg(size)));
    return frame;
  }

  /** The Example's keys, list kinds and lengths must be what features.json declares, or TFDS cannot parse it. */
  private checkAgainstDeclared(features: ReadonlyMap<string, FeatureValues>): void {
    const keys = [...features.keys()].sort().join(", ");
    const declared = [...this.declared.keys()].sort().join(", ");
    if (keys !== declared) throw new Error(`RLDS writer bug: the Example has keys [${keys}] but features.json declares [${declared}]`);
    for (const [key, spec] of this.declared) {
      const feature = features.get(key)!;
      const expected = spec.valuesPerElement * (spec.inSteps ? this.stepCount : 1);
      if (feature.kind !== spec.kind || feature.values.length !== expected) {
        throw new Error(`RLDS writer bug: ${key} has ${feature.values.length} ${feature.kind} values, features.json declares ${expected} ${spec.kind}`);
      }
    }
  }
}

function text(value: string): FeatureValues {
  return { kind: "bytes", values: [utf8(value)] };
}
