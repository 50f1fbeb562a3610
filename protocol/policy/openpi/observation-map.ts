/**
 * `policy.observation_map` of an openpi endpoint: which key of the server's observation map
 * carries which camera, the joint positions, the gripper opening and the instruction, and at what
 * image size and layout. See docs/policies-openpi.md.
 *
 *   {preset?: "droid" | "aloha" | "lerobot",
 *    images?: [{key, camera, width, height, layout?: "hwc" | "chw", resize?: "pad" | "stretch"}],
 *    state?: key | null, gripper?: key | null, prompt?: key | null}
 *
 * A key is a string (one literal key; DROID's contain "/") or an array of strings (a path into
 * nested maps, ALOHA's ["images", "cam_high"]). A preset fills in its family's keys, sizes and
 * layout (observation-presets.ts); explicit fields override it, `images` as a whole list, and null
 * drops a preset's field. The coordinator resolves the map at submission and the agent again at
 * the episode's start, against the same contract, so both refuse the same maps with the same words.
 */
import { cameraForView, PRESET_NAMES, PRESETS, type PresetName } from "./observation-presets.js";

export type ImageLayout = "hwc" | "chw";
export type ImageResize = "pad" | "stretch";

export interface ObservationMapImage {
  key: string | string[];
  /** A camera of the observation contract. */
  camera: string;
  width: number;
  height: number;
  /** "hwc" (default): height x width x 3; "chw": 3 x height x width. */
  layout?: ImageLayout;
  /** "pad" (default): keep the aspect ratio and pad with black, as openpi's resize_with_pad; "stretch": fill. */
  resize?: ImageResize;
}

/** The map as submitted. */
export interface ObservationMap {
  preset?: PresetName;
  images?: ObservationMapImage[];
  state?: string | string[] | null;
  gripper?: string | string[] | null;
  prompt?: string | string[] | null;
}

export interface ResolvedImage {
  path: string[];
  camera: string;
  width: number;
  height: number;
  layout: ImageLayout;
  resize: ImageResize;
}

/** What to send: each entry's path into the request map. */
export interface ResolvedObservationMap {
  images: ResolvedImage[];
  /** float32 [length]: the joint positions, radians. */
  state?: { path: string[]; length: number };
  /** float32 [1]: the gripper opening, 0 closed to 1 open. */
  gripper?: { path: string[] };
  /** The episode's instruction, a string. */
  prompt?: { path: string[] };
}

/** What the map is resolved against: the policy's observation contract and the robot. */
export interface ObservationMapContext {
  /** Cameras the policy may see (the contract's, or all the cell's when the contract names none). */
  cameras: readonly string[];
  /** State channels the policy may see ("joint_positions", "gripper_state", ...). */
  state: readonly string[];
  /** The robot's degrees of freedom: the length of the joint positions. */
  dof: number;
}

/** A map that cannot be sent. `field` is the offending field's path, e.g. `policy.observation_map.images[1].camera`. */
export class ObservationMapError extends Error {
  constructor(readonly field: string, detail: string) {
    super(`${field}: ${detail}`);
    this.name = "ObservationMapError";
  }
}

const FIELD = "policy.observation_map";
const MAP_FIELDS = ["preset", "images", "state", "gripper", "prompt"];
const IMAGE_FIELDS = ["key", "camera", "width", "height", "layout", "resize"];
const MAX_SIDE_PX = 4096;

const show = (value: unknown) => JSON.stringify(value) ?? String(value);
/** A key as the customer wrote it: "observation/state", or ["images", "cam_high"]. */
const showKey = (path: readonly string[]) => (path.length === 1 ? show(path[0]) : `[${path.map(show).join(", ")}]`);
const list = (values: readonly string[]) => (values.length ? values.map(show).join(", ") : "none");

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function rejectUnknown(value: Record<string, unknown>, allowed: readonly string[], field: string): void {
  const unknown = Object.keys(value).find((k) => !allowed.includes(k));
  if (unknown !== undefined) throw new ObservationMapError(field, `unknown field ${show(unknown)}; allowed: ${allowed.join(", ")}`);
}

function keyPath(value: unknown, field: string): string[] {
  if (typeof value === "string" && value.length > 0) return [value];
  if (Array.isArray(value) && value.length > 0 && value.every((k) => typeof k === "string" && k.length > 0)) return [...value];
  throw new ObservationMapError(field, `a key is a non-empty string, or an array of non-empty strings for a path into nested maps; got ${show(value)}`);
}

interface ChosenKey {
  path: string[];
  field: string;
  /** The preset it came from, when it was not given explicitly. */
  preset?: PresetName;
}

/** An explicit field (null drops the preset's), else the preset's, else nothing. */
function chosenKey(map: Record<string, unknown>, name: "state" | "gripper" | "prompt", presetName: PresetName | undefined): ChosenKey | undefined {
  const field = `${FIELD}.${name}`;
  if (name in map) {
    const value = map[name];
    return value === null || value === undefined ? undefined : { path: keyPath(value, field), field };
  }
  const key = presetName ? PRESETS[presetName][name] : undefined;
  return key === undefined ? undefined : { path: keyPath(key, field), field, preset: presetName };
}

function sidePx(value: unknown, field: string): number {
  if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > MAX_SIDE_PX) {
    throw new ObservationMapError(field, `must be an integer number of pixels from 1 to ${MAX_SIDE_PX}; got ${show(value)}`);
  }
  return value as number;
}

function explicitImages(value: unknown, context: ObservationMapContext): Array<ResolvedImage & { field: string }> {
  if (!Array.isArray(value)) throw new ObservationMapError(`${FIELD}.images`, `must be an array of {key, camera, width, height}; got ${show(value)}`);
  return value.map((entry, i) => {
    const field = `${FIELD}.images[${i}]`;
    if (!isPlainObject(entry)) throw new ObservationMapError(field, `must be an object {key, camera, width, height, layout?, resize?}; got ${show(entry)}`);
    rejectUnknown(entry, IMAGE_FIELDS, field);
    const path = keyPath(entry.key, `${field}.key`);
    const camera = entry.camera;
    if (typeof camera !== "string" || !context.cameras.includes(camera)) {
      throw new ObservationMapError(`${field}.camera`, `${show(camera)} is not a camera of policy.observation_contract.cameras (${list(context.cameras)}); name one of those, or add it to the contract`);
    }
    const width = sidePx(entry.width, `${field}.width`);
    const height = sidePx(entry.height, `${field}.height`);
    const layout = entry.layout ?? "hwc";
    if (layout !== "hwc" && layout !== "chw") throw new ObservationMapError(`${field}.layout`, `must be "hwc" (height x width x 3) or "chw" (3 x height x width); got ${show(layout)}`);
    const resize = entry.resize ?? "pad";
    if (resize !== "pad" && resize !== "stretch") throw new ObservationMapError(`${field}.resize`, `must be "pad" (keep the aspect ratio, pad with black) or "stretch"; got ${show(resize)}`);
    return { field: `${field}.key`, path, camera, width, height, layout, resize };
  });
}

function presetImages(name: PresetName, context: ObservationMapContext): Array<ResolvedImage & { field: string }> {
  const preset = PRESETS[name];
  const images: Array<ResolvedImage & { field: string }> = [];
  for (const image of preset.images) {
    const camera = cameraForView(image.view, context.cameras);
    if (camera === undefined) {
      if (!image.required) continue;
      const wanted = image.view === "wrist" ? `a "wrist" camera` : `an exterior camera ("top" or any camera but "wrist")`;
      throw new ObservationMapError(`${FIELD}.preset`, `the ${name} preset sends ${showKey(keyPath(image.key, FIELD))} from ${wanted}, and policy.observation_contract.cameras (${list(context.cameras)}) has none; add one to the contract, or give ${FIELD}.images`);
    }
    images.push({ field: `${FIELD}.preset`, path: keyPath(image.key, `${FIELD}.preset`), camera, width: preset.width, height: preset.height, layout: preset.layout, resize: preset.resize });
  }
  if (preset.everyCameraAt !== undefined) {
    if (context.cameras.length === 0) throw new ObservationMapError(`${FIELD}.preset`, `the ${name} preset sends every camera of policy.observation_contract.cameras, and it lists none; add the cameras your policy was trained with`);
    for (const camera of context.cameras) {
      images.push({ field: `${FIELD}.preset`, path: [`${preset.everyCameraAt}${camera}`], camera, width: preset.width, height: preset.height, layout: preset.layout, resize: preset.resize });
    }
  }
  return images;
}

function requireChannel(context: ObservationMapContext, channel: string, key: ChosenKey, what: string): void {
  if (!context.state.includes(channel)) {
    const who = key.preset ? `the ${key.preset} preset sends` : "sends";
    throw new ObservationMapError(key.field, `${who} ${what} as ${showKey(key.path)}, but policy.observation_contract.state does not list ${show(channel)}; add it to the contract, or set ${key.field} to null to send none`);
  }
}

/** Two fields may not write the same key, nor one a key inside the other's value. */
function rejectClashes(entries: Array<{ path: string[]; field: string }>): void {
  for (let i = 0; i < entries.length; i++) {
    for (let j = 0; j < i; j++) {
      const [a, b] = [entries[i], entries[j]];
      const n = Math.min(a.path.length, b.path.length);
      if (a.path.slice(0, n).every((k, x) => k === b.path[x])) {
        const detail = a.path.length === b.path.length
          ? `${showKey(a.path)} is also the key of ${b.field}; each field needs a key of its own`
          : `${showKey(a.path)} and ${showKey(b.path)} (${b.field}) would make ${showKey(a.path.slice(0, n))} both a value and a map; choose keys apart`;
        throw new ObservationMapError(a.field, detail);
      }
    }
  }
}

/**
 * Checks `raw` (the submitted `policy.observation_map`) against the contract and fills in its
 * preset. Throws ObservationMapError naming the field and what to change.
 */
export function resolveObservationMap(raw: unknown, context: ObservationMapContext): ResolvedObservationMap {
  if (raw === undefined || raw === null) {
    throw new ObservationMapError(FIELD, `required when policy.protocol is "openpi": give {"preset": "droid"}, {"preset": "aloha"}, {"preset": "lerobot"}, or your server's keys (images, state, gripper, prompt)`);
  }
  if (!isPlainObject(raw)) throw new ObservationMapError(FIELD, `must be an object; got ${show(raw)}`);
  rejectUnknown(raw, MAP_FIELDS, FIELD);
  if (!Number.isInteger(context.dof) || context.dof < 1) throw new RangeError(`dof must be a positive integer; got ${context.dof}`);

  let presetName: PresetName | undefined;
  if (raw.preset !== undefined) {
    if (!(PRESET_NAMES as readonly unknown[]).includes(raw.preset)) {
      throw new ObservationMapError(`${FIELD}.preset`, `unknown preset ${show(raw.preset)}; the presets are ${PRESET_NAMES.map(show).join(", ")}, or leave it out and give the keys`);
    }
    presetName = raw.preset as PresetName;
  }

  const images = raw.images !== undefined ? explicitImages(raw.images, context) : presetName ? presetImages(presetName, context) : [];
  const state = chosenKey(raw, "state", presetName);
  const gripper = chosenKey(raw, "gripper", presetName);
  const prompt = chosenKey(raw, "prompt", presetName);
  if (state) requireChannel(context, "joint_positions", state, "the joint positions");
  if (gripper) requireChannel(context, "gripper_state", gripper, "the gripper opening");
  if (images.length === 0 && !state && !gripper) {
    throw new ObservationMapError(FIELD, `sends no image and no state; give a preset, or images and state`);
  }
  rejectClashes([...images, ...[state, gripper, prompt].filter((k) => k !== undefined)]);

  return {
    images: images.map(({ field: _field, ...image }) => image),
    ...(state ? { state: { path: state.path, length: context.dof } } : {}),
    ...(gripper ? { gripper: { path: gripper.path } } : {}),
    ...(prompt ? { prompt: { path: prompt.path } } : {}),
  };
}
