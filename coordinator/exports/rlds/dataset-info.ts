/**
 * `dataset_info.json` and `metadata.json` of an exported run.
 *
 * dataset_info.json is TFDS's DatasetInfo proto as proto3 JSON (core/proto/dataset_info.proto, written
 * by `json_format.MessageToJson(proto, sort_keys=True)`): camelCase names, int64 values as strings.
 * TFDS reads it back with `json_format.Parse`, which rejects any field the proto does not have, so the
 * run's pins cannot be extra keys here: they go in `description` (markdown, shown by
 * `builder.info`) and in `metadata.json`, which DatasetInfo.read_from_directory loads as
 * `builder.info.metadata` (a dict).
 */
import type { ExportRun } from "../export-input.js";
import type { RunLayout } from "./run-layout.js";
import { TFDS_FILEPATH_TEMPLATE } from "./tfrecord-shards.js";

export const DATASET_NAME = "assay_run";
export const DATASET_VERSION = "1.0.0";
export const SPLIT_NAME = "train";
export const FILE_FORMAT = "tfrecord";

export interface SplitSummary {
  shardLengths: number[];
  /** Serialized Example bytes without TFRecord framing, as TFDS's writers count a split's size. */
  numBytes: number;
}

/** The content of dataset_info.json (keys sorted, as TFDS writes them). */
export function datasetInfoJson(run: ExportRun, layout: RunLayout, split: SplitSummary): Record<string, unknown> {
  return {
    description: describeRun(run, layout),
    fileFormat: FILE_FORMAT,
    moduleName: "assay.coordinator.exports.rlds",
    name: DATASET_NAME,
    releaseNotes: { [DATASET_VERSION]: "Assay run export: one RLDS episode per example." },
    splits: [
      {
        filepathTemplate: TFDS_FILEPATH_TEMPLATE,
        name: SPLIT_NAME,
        numBytes: String(split.numBytes),
        shardLengths: split.shardLengths.map(String),
      },
    ],
    version: DATASET_VERSION,
  };
}

/** The content of metadata.json: the run's pins with the spec's names. */
export function runMetadataJson(run: ExportRun, layout: RunLayout): Record<string, unknown> {
  return {
    run_id: run.runId,
    kind: run.kind,
    robot: run.robot,
    environment: run.environment,
    task: run.task,
    control_rate_hz: run.controlRateHz,
    resolved_pins: run.resolvedPins,
    created: run.created,
    completed: run.completed,
    joint_names: layout.jointNames,
    cameras: Object.fromEntries(layout.cameras.map((c) => [c.name, { width: c.width, height: c.height }])),
  };
}

function describeRun(run: ExportRun, layout: RunLayout): string {
  const cameras = layout.cameras.map((c) => `${c.name} (${c.width}x${c.height})`).join(", ") || "none";
  const pins = {
    run_id: run.runId,
    kind: run.kind,
    resolved_pins: run.resolvedPins,
    created: run.created,
    completed: run.completed,
  };
  return [
    `Assay run ${run.runId} (${run.kind}), exported as RLDS: one episode per example, one step per control step at ${run.controlRateHz} Hz.`,
    "",
    `Robot ${run.robot}, environment ${run.environment}, task ${run.task}. Created ${run.created}, completed ${run.completed ?? "not yet"}.`,
    `Joint order of observation/state and action (rad): ${layout.jointNames.join(", ")}. Cameras: ${cameras}.`,
    "",
    "Pins (also in metadata.json, `builder.info.metadata`):",
    "",
    "```json",
    JSON.stringify(pins, null, 2),
    "```",
  ].join("\n");
}
