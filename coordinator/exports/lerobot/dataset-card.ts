/**
 * The dataset card, `README.md`, shaped like the one LeRobot pushes to the Hub
 * (`create_lerobot_dataset_card`: YAML metadata with the `LeRobot` tag, `robotics` task category
 * and the `data/*\/*.parquet` config, then a description and `meta/info.json`), saying which
 * Assay run the episodes come from and under which pins.
 */
import type { ExportRun } from "../export-input.js";
import { robotType, type DatasetTotals } from "./dataset-info.js";

/** A YAML/Markdown-safe rendering of a pin value. */
function pinText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

export function datasetCard(run: ExportRun, info: Record<string, unknown>, totals: DatasetTotals): string {
  const robot = robotType(run.robot);
  const pins = Object.entries(run.resolvedPins);
  const lines = [
    "---",
    "task_categories:",
    "- robotics",
    "tags:",
    "- LeRobot",
    "- assay",
    `- ${JSON.stringify(robot)}`,
    "configs:",
    "- config_name: default",
    "  data_files: data/*/*.parquet",
    "---",
    "",
    "This dataset was exported by Assay in the [LeRobot](https://github.com/huggingface/lerobot) dataset format v3.0.",
    "",
    "## Dataset Description",
    "",
    `Episodes of the Assay evaluation run \`${run.runId}\` (kind \`${run.kind}\`), created ${run.created}` +
      (run.completed ? `, completed ${run.completed}.` : ", not completed."),
    "",
    `- **Episodes:** ${totals.episodes} (${totals.frames} frames at ${run.controlRateHz} fps)`,
    `- **Tasks:** ${totals.tasks}`,
    `- **Robot:** ${run.robot} (robot_type \`${robot}\`)`,
    `- **Environment:** ${run.environment}`,
    `- **Task pin:** ${run.task}`,
    "",
    "Each episode's Assay record (outcome, intervention, failure cluster, replay spec, cell, seed and pins) is in the",
    "`assay/*` columns of `meta/episodes/`; the run's record is under `assay` in `meta/info.json`.",
    "",
    "### Pins",
    "",
    "| pin | value |",
    "| --- | --- |",
    ...pins.map(([name, value]) => `| ${name} | ${pinText(value).replaceAll("|", "\\|")} |`),
    "",
    "## Dataset Structure",
    "",
    "[meta/info.json](meta/info.json):",
    "```json",
    JSON.stringify(info, null, 4),
    "```",
    "",
  ];
  return lines.join("\n");
}
