/**
 * The RLDS feature set of an Assay run, declared once: it renders `features.json` (what
 * `tfds.builder_from_directory` rebuilds the FeatureConnectors from) and lists the flat Example keys
 * the episode writer must produce.
 *
 * features.json is `json_format.MessageToDict(feature.to_proto())` of TFDS's Feature proto
 * (tensorflow_datasets/core/proto/feature.proto): `pythonClassName`, one content field (`featuresDict`,
 * `sequence`, `tensor`, `image`, `text`), an optional `description`; int64 fields are JSON strings
 * (proto3 JSON), so a shape is `{"dimensions": ["6"]}` and a Dataset's unknown length is `"-1"`.
 *
 * Serialization (core/example_serializer.py): nested dicts flatten to `/`-joined keys; a feature inside
 * the `steps` Dataset is all steps' values concatenated (sequence rank 1: no ragged fields); bool and
 * int64 go in int64_list, float32 in float_list, Text and encoded Image in bytes_list (one JPEG per step).
 */
import type { FeatureKind } from "./tf-example.js";
import type { RunLayout } from "./run-layout.js";

const CLASS = {
  featuresDict: "tensorflow_datasets.core.features.features_dict.FeaturesDict",
  dataset: "tensorflow_datasets.core.features.dataset_feature.Dataset",
  tensor: "tensorflow_datasets.core.features.tensor_feature.Tensor",
  scalar: "tensorflow_datasets.core.features.scalar.Scalar",
  image: "tensorflow_datasets.core.features.image_feature.Image",
  text: "tensorflow_datasets.core.features.text_feature.Text",
} as const;

type TensorDtype = "float32" | "int64" | "bool";

export type FeatureNode =
  | { type: "dict"; features: Record<string, FeatureNode>; description?: string }
  | { type: "dataset"; feature: FeatureNode; description?: string }
  | { type: "tensor"; dtype: TensorDtype; shape: number[]; description: string }
  | { type: "scalar"; dtype: TensorDtype; description: string }
  | { type: "image"; height: number; width: number; description: string }
  | { type: "text"; description: string };

const dict = (features: Record<string, FeatureNode>, description?: string): FeatureNode => ({ type: "dict", features, description });
const scalar = (dtype: TensorDtype, description: string): FeatureNode => ({ type: "scalar", dtype, description });
const text = (description: string): FeatureNode => ({ type: "text", description });

/** The RLDS features of a run with this layout. */
export function rldsFeatureTree(layout: RunLayout): FeatureNode {
  const dof = layout.jointNames.length;
  const joints = layout.jointNames.join(", ");
  const observation: Record<string, FeatureNode> = {
    state: { type: "tensor", dtype: "float32", shape: [dof], description: `Measured joint positions (rad), in the order: ${joints}.` },
  };
  for (const camera of layout.cameras) {
    observation[camera.name] = {
      type: "image", height: camera.height, width: camera.width,
      description: `Camera ${camera.name}: its latest JPEG frame at the step (a slower camera repeats its frame; black before its first).`,
    };
  }
  return dict({
    steps: {
      type: "dataset",
      feature: dict({
        observation: dict(observation),
        action: { type: "tensor", dtype: "float32", shape: [dof], description: `Commanded joint position targets (rad), in the order: ${joints}; a step that sent no command repeats the measured position.` },
        reward: scalar("float32", "1 on the last step of an episode whose outcome is success (a person may have helped: see episode_metadata/intervened), else 0."),
        discount: scalar("float32", "Always 1."),
        is_first: scalar("bool", "True on the first step of the episode."),
        is_last: scalar("bool", "True on the last step of the episode."),
        is_terminal: scalar("bool", "True on the last step: every episode ends in an outcome, none is truncated."),
        language_instruction: text("The language instruction the policy was given."),
      }),
    },
    episode_metadata: dict({
      run_id: text("The Assay run the episode belongs to."),
      episode_id: text("The episode's id."),
      episode_index: scalar("int64", "The episode's index in its run."),
      outcome: text("success or failure."),
      policy_succeeded: scalar("bool", "The policy's own outcome: success and no person intervened."),
      intervened: scalar("bool", "A person helped during the episode."),
      failure_cluster: text("The failure's cluster, empty when none."),
      replay_spec: text("JSON of the episode's replay spec (null when none)."),
      cell_id: text("The cell that ran the episode, empty when unknown."),
      seed: scalar("int64", "The episode's seed."),
      robot: text("The robot (model@firmware)."),
      environment: text("The environment."),
      task: text("The task."),
    }),
  });
}

/** The content of `features.json` for `node` (the shape `FeatureConnector.save_config` writes). */
export function featuresJson(node: FeatureNode): Record<string, unknown> {
  const withDescription = (json: Record<string, unknown>, description?: string) => (description ? { ...json, description } : json);
  const shape = (dims: number[]) => (dims.length > 0 ? { dimensions: dims.map(String) } : {});
  switch (node.type) {
    case "dict":
      return withDescription({
        pythonClassName: CLASS.featuresDict,
        featuresDict: { features: Object.fromEntries(Object.keys(node.features).sort().map((k) => [k, featuresJson(node.features[k])])) },
      }, node.description);
    case "dataset":
      return withDescription({ pythonClassName: CLASS.dataset, sequence: { feature: featuresJson(node.feature), length: "-1" } }, node.description);
    case "tensor":
      return withDescription({ pythonClassName: CLASS.tensor, tensor: { shape: shape(node.shape), dtype: node.dtype, encoding: "none" } }, node.description);
    case "scalar":
      return withDescription({ pythonClassName: CLASS.scalar, tensor: { shape: {}, dtype: node.dtype, encoding: "none" } }, node.description);
    case "image":
      return withDescription({
        pythonClassName: CLASS.image,
        image: { shape: shape([node.height, node.width, 3]), dtype: "uint8", encodingFormat: "jpeg" },
      }, node.description);
    case "text":
      return withDescription({ pythonClassName: CLASS.text, text: {} }, node.description);
  }
}

/** One flat Example key: its list kind and how many values one element (one step, or the episode) has. */
export interface FlatFeature {
  kind: FeatureKind;
  valuesPerElement: number;
  inSteps: boolean;
}

/** The flat Example keys of `node` (`steps/observation/state`, `episode_metadata/seed`, ...). */
export function flatFeatures(node: FeatureNode, prefix = "", inSteps = false): Map<string, FlatFeature> {
  const out = new Map<string, FlatFeature>();
  const leaf = (kind: FeatureKind, valuesPerElement: number) => out.set(prefix, { kind, valuesPerElement, inSteps });
  switch (node.type) {
    case "dict":
      for (const [key, child] of Object.entries(node.features)) {
        for (const [k, v] of flatFeatures(child, prefix ? `${prefix}/${key}` : key, inSteps)) out.set(k, v);
      }
      break;
    case "dataset":
      return flatFeatures(node.feature, prefix, true);
    case "tensor":
      leaf(node.dtype === "float32" ? "float" : "int64", node.shape.reduce((a, b) => a * b, 1));
      break;
    case "scalar":
      leaf(node.dtype === "float32" ? "float" : "int64", 1);
      break;
    case "image":
    case "text":
      leaf("bytes", 1);
      break;
  }
  return out;
}
