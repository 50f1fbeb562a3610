/**
 * The key sets of the two openpi policy families a customer can name as `observation_map.preset`,
 * as openpi's own examples send them (`make_droid_example`, `make_aloha_example`, and the clients
 * in examples/droid/main.py and examples/aloha_real/env.py): 224x224 uint8 images resized with
 * padding, DROID's flat "observation/..." keys and height x width x 3 images, ALOHA's nested
 * `images` map and 3 x height x width images.
 *
 * The "lerobot" preset sends LeRobot's keys (`observation.state`, `observation.images.<camera>` for
 * every camera of the contract, `task`), the names a LeRobot-trained policy reads.
 *
 * A preset names views, not cameras: "exterior" is the contract's "top" camera, or its first camera
 * other than "wrist"; "wrist" is the contract's "wrist" camera.
 */
export const PRESET_NAMES = ["droid", "aloha", "lerobot"] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

export type PresetView = "exterior" | "wrist";

export interface PresetImage {
  key: string | string[];
  view: PresetView;
  /** False when the server fills a missing camera itself (ALOHA replaces absent wrists with black images). */
  required: boolean;
}

export interface Preset {
  images: PresetImage[];
  /** Also send every camera of the contract, each at `<prefix><camera name>` (LeRobot's `observation.images.<camera>`). */
  everyCameraAt?: string;
  width: number;
  height: number;
  layout: "hwc" | "chw";
  resize: "pad" | "stretch";
  state: string | string[];
  gripper?: string | string[];
  prompt: string | string[];
}

export const PRESETS: Record<PresetName, Preset> = {
  // DroidInputs reads all five keys; state is joint_position (7 on a Franka) + gripper_position (1).
  droid: {
    images: [
      { key: "observation/exterior_image_1_left", view: "exterior", required: true },
      { key: "observation/wrist_image_left", view: "wrist", required: true },
    ],
    width: 224, height: 224, layout: "hwc", resize: "pad",
    state: "observation/joint_position",
    gripper: "observation/gripper_position",
    prompt: "prompt",
  },
  // AlohaInputs needs images.cam_high; cam_low and the wrists are optional. The gripper is inside `state`.
  aloha: {
    images: [
      { key: ["images", "cam_high"], view: "exterior", required: true },
      { key: ["images", "cam_left_wrist"], view: "wrist", required: false },
    ],
    width: 224, height: 224, layout: "chw", resize: "pad",
    state: "state",
    prompt: "prompt",
  },
  // LeRobot's feature names (lerobot/utils/constants.py OBS_STATE, OBS_IMAGES; the dataset's "task"):
  // one image per camera at the SO-101 examples' 640x480, height x width x 3 uint8 as a LeRobot
  // camera reads it; the state is the joints with the gripper last, so no separate gripper key.
  // Pair it with observation_contract.units "lerobot" to send the state in LeRobot's units.
  lerobot: {
    images: [],
    everyCameraAt: "observation.images.",
    width: 640, height: 480, layout: "hwc", resize: "pad",
    state: "observation.state",
    prompt: "task",
  },
};

/** The contract camera a preset view reads, or undefined when the contract has none for it. */
export function cameraForView(view: PresetView, cameras: readonly string[]): string | undefined {
  if (view === "wrist") return cameras.includes("wrist") ? "wrist" : undefined;
  return cameras.includes("top") ? "top" : cameras.find((c) => c !== "wrist");
}
