/**
 * `policy.observation_map` of openpi endpoints: the presets' key sets (as openpi's make_droid_example
 * and make_aloha_example), overrides, and every refusal, each naming its field and the fix.
 */
import assert from "node:assert/strict";
import { ObservationMapError, resolveObservationMap, type ObservationMapContext } from "../../protocol/policy/openpi/observation-map.js";

const CONTEXT: ObservationMapContext = { cameras: ["top", "wrist"], state: ["joint_positions", "gripper_state"], dof: 6 };

function refusal(raw: unknown, context: ObservationMapContext = CONTEXT): ObservationMapError {
  try {
    resolveObservationMap(raw, context);
  } catch (error) {
    assert.ok(error instanceof ObservationMapError, `expected an ObservationMapError, got ${String(error)}`);
    return error;
  }
  assert.fail("the map was accepted");
}

describe("openpi observation_map", () => {
  it("preset droid: DROID's five keys, 224x224 hwc padded, exterior from top, wrist from wrist", () => {
    assert.deepEqual(resolveObservationMap({ preset: "droid" }, CONTEXT), {
      images: [
        { path: ["observation/exterior_image_1_left"], camera: "top", width: 224, height: 224, layout: "hwc", resize: "pad" },
        { path: ["observation/wrist_image_left"], camera: "wrist", width: 224, height: 224, layout: "hwc", resize: "pad" },
      ],
      state: { path: ["observation/joint_position"], length: 6 },
      gripper: { path: ["observation/gripper_position"] },
      prompt: { path: ["prompt"] },
    });
  });

  it("preset aloha: images.cam_high and images.cam_left_wrist as 3x224x224, state, prompt, no gripper key", () => {
    assert.deepEqual(resolveObservationMap({ preset: "aloha" }, CONTEXT), {
      images: [
        { path: ["images", "cam_high"], camera: "top", width: 224, height: 224, layout: "chw", resize: "pad" },
        { path: ["images", "cam_left_wrist"], camera: "wrist", width: 224, height: 224, layout: "chw", resize: "pad" },
      ],
      state: { path: ["state"], length: 6 },
      prompt: { path: ["prompt"] },
    });
  });

  it("preset lerobot: LeRobot's keys, observation.images.<camera> for every contract camera at 640x480 hwc, observation.state, task", () => {
    assert.deepEqual(resolveObservationMap({ preset: "lerobot" }, { ...CONTEXT, cameras: ["front", "wrist"] }), {
      images: [
        { path: ["observation.images.front"], camera: "front", width: 640, height: 480, layout: "hwc", resize: "pad" },
        { path: ["observation.images.wrist"], camera: "wrist", width: 640, height: 480, layout: "hwc", resize: "pad" },
      ],
      state: { path: ["observation.state"], length: 6 },
      prompt: { path: ["task"] },
    });
    assert.match(refusal({ preset: "lerobot" }, { ...CONTEXT, cameras: [] }).message, /the lerobot preset sends every camera of policy\.observation_contract\.cameras, and it lists none/);
  });

  it("a preset takes the first camera but wrist for the exterior view when there is no top, and aloha goes without a wrist", () => {
    const map = resolveObservationMap({ preset: "aloha" }, { ...CONTEXT, cameras: ["head", "side"] });
    assert.deepEqual(map.images.map((i) => [i.path.join("."), i.camera]), [["images.cam_high", "head"]]);
  });

  it("explicit fields override the preset: images as a whole, keys, null drops a key", () => {
    const map = resolveObservationMap({
      preset: "droid",
      images: [{ key: ["obs", "front"], camera: "wrist", width: 128, height: 96, layout: "chw", resize: "stretch" }],
      state: "qpos", gripper: null, prompt: ["task", "text"],
    }, CONTEXT);
    assert.deepEqual(map, {
      images: [{ path: ["obs", "front"], camera: "wrist", width: 128, height: 96, layout: "chw", resize: "stretch" }],
      state: { path: ["qpos"], length: 6 },
      prompt: { path: ["task", "text"] },
    });
  });

  it("without a preset only what is given is sent", () => {
    assert.deepEqual(resolveObservationMap({ images: [{ key: "img", camera: "top", width: 64, height: 48 }] }, CONTEXT), {
      images: [{ path: ["img"], camera: "top", width: 64, height: 48, layout: "hwc", resize: "pad" }],
    });
  });

  const refusals: Array<{ name: string; raw: unknown; context?: ObservationMapContext; field: string; says: RegExp }> = [
    { name: "a missing map", raw: undefined, field: "policy.observation_map", says: /required when policy\.protocol is "openpi": give \{"preset": "droid"\}/ },
    { name: "a map that is not an object", raw: "droid", field: "policy.observation_map", says: /must be an object; got "droid"/ },
    { name: "an unknown field", raw: { preset: "droid", camera: "top" }, field: "policy.observation_map", says: /unknown field "camera"; allowed: preset, images, state, gripper, prompt/ },
    { name: "an unknown preset", raw: { preset: "libero" }, field: "policy.observation_map.preset", says: /unknown preset "libero"; the presets are "droid", "aloha"/ },
    { name: "droid without a wrist camera", raw: { preset: "droid" }, context: { ...CONTEXT, cameras: ["top"] }, field: "policy.observation_map.preset", says: /the droid preset sends "observation\/wrist_image_left" from a "wrist" camera, and policy\.observation_contract\.cameras \("top"\) has none; add one to the contract, or give policy\.observation_map\.images/ },
    { name: "a preset with only a wrist camera", raw: { preset: "aloha" }, context: { ...CONTEXT, cameras: ["wrist"] }, field: "policy.observation_map.preset", says: /from an exterior camera/ },
    { name: "images not an array", raw: { images: { key: "a" } }, field: "policy.observation_map.images", says: /must be an array of \{key, camera, width, height\}/ },
    { name: "an image that is not an object", raw: { images: [3] }, field: "policy.observation_map.images[0]", says: /must be an object/ },
    { name: "an image with an unknown field", raw: { images: [{ key: "a", camera: "top", width: 1, height: 1, size: 3 }] }, field: "policy.observation_map.images[0]", says: /unknown field "size"/ },
    { name: "an empty key", raw: { images: [{ key: "", camera: "top", width: 1, height: 1 }] }, field: "policy.observation_map.images[0].key", says: /a key is a non-empty string, or an array of non-empty strings/ },
    { name: "a key path with a number", raw: { state: ["obs", 1] }, field: "policy.observation_map.state", says: /got \["obs",1\]/ },
    {
      name: "a camera outside the contract",
      raw: { images: [{ key: "a", camera: "top", width: 8, height: 8 }, { key: "b", camera: "side", width: 8, height: 8 }] },
      field: "policy.observation_map.images[1].camera",
      says: /"side" is not a camera of policy\.observation_contract\.cameras \("top", "wrist"\); name one of those, or add it to the contract/,
    },
    { name: "a width of 0", raw: { images: [{ key: "a", camera: "top", width: 0, height: 8 }] }, field: "policy.observation_map.images[0].width", says: /an integer number of pixels from 1 to 4096; got 0/ },
    { name: "a fractional height", raw: { images: [{ key: "a", camera: "top", width: 8, height: 2.5 }] }, field: "policy.observation_map.images[0].height", says: /got 2\.5/ },
    { name: "an unknown layout", raw: { images: [{ key: "a", camera: "top", width: 8, height: 8, layout: "whc" }] }, field: "policy.observation_map.images[0].layout", says: /"hwc" \(height x width x 3\) or "chw" \(3 x height x width\); got "whc"/ },
    { name: "an unknown resize", raw: { images: [{ key: "a", camera: "top", width: 8, height: 8, resize: "crop" }] }, field: "policy.observation_map.images[0].resize", says: /"pad" .* or "stretch"; got "crop"/ },
    { name: "state without joint_positions in the contract", raw: { state: "q" }, context: { ...CONTEXT, state: [] }, field: "policy.observation_map.state", says: /sends the joint positions as "q", but policy\.observation_contract\.state does not list "joint_positions"; add it to the contract, or set policy\.observation_map\.state to null to send none/ },
    { name: "the preset's gripper without gripper_state", raw: { preset: "droid" }, context: { ...CONTEXT, state: ["joint_positions"] }, field: "policy.observation_map.gripper", says: /the droid preset sends the gripper opening as "observation\/gripper_position", but .* does not list "gripper_state"/ },
    { name: "two fields on one key", raw: { images: [{ key: "x", camera: "top", width: 8, height: 8 }], state: "x" }, field: "policy.observation_map.state", says: /"x" is also the key of policy\.observation_map\.images\[0\]\.key; each field needs a key of its own/ },
    { name: "a key inside another's value", raw: { preset: "aloha", state: ["images", "cam_high", "q"] }, field: "policy.observation_map.state", says: /\["images", "cam_high", "q"\] and \["images", "cam_high"\] \(policy\.observation_map\.preset\) would make \["images", "cam_high"\] both a value and a map/ },
    { name: "a map that sends nothing", raw: { prompt: "prompt" }, field: "policy.observation_map", says: /sends no image and no state; give a preset, or images and state/ },
  ];

  for (const { name, raw, context, field, says } of refusals) {
    it(`refuses ${name}, naming ${field}`, () => {
      const error = refusal(raw, context);
      assert.equal(error.field, field);
      assert.ok(error.message.startsWith(`${field}: `), error.message);
      assert.match(error.message, says);
    });
  }
});
