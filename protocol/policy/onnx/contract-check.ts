/**
 * An ONNX checkpoint's declared inputs and outputs checked against the run's policy contracts
 * (`action_space`, `observation_contract`, `inference`) under the I/O convention of
 * io-convention.ts. The coordinator runs it on the uploaded bytes at submission; the cell runs it
 * again before the first inference, and uses the plan it yields to build the model's inputs.
 *
 * Chunking: the model's chunk is the output's middle dimension ([1, chunk, dof]); a one-step output
 * ([1, dof]) is a chunk of 1. `inference.chunk_size` must equal a fixed chunk dimension, and gives the
 * expected row count when the dimension is symbolic. `inference.action_horizon` (default: the whole
 * chunk) is how many rows run before the next inference; it cannot exceed the chunk.
 */
import {
  ACTION_OUTPUT, NOISE_INPUT, STATE_CHANNEL_NAMES, STATE_INPUT, cameraOfInput, isStateChannel, stateChannelWidth,
  type StateChannel,
} from "./io-convention.js";
import { MAX_CHUNK_ROWS, MAX_IMAGE_UPSCALE, MAX_NOISE_VALUES, maxImageInput, type CameraSize } from "./input-bounds.js";
import { formatDims, type OnnxDim, type OnnxModelDescription, type OnnxValueDescription } from "./model-description.js";

/** Values of `policy.runtime` a checkpoint may declare. */
export const SUPPORTED_RUNTIMES = ["onnx"] as const;

/** The ai.onnx opsets the cells' onnxruntime-web 1.30 loads (measured: 6 and below find no kernels, 27 is refused). */
export const SUPPORTED_OPSETS = { min: 7, max: 26 } as const;

/** Operator domains onnxruntime-web has kernels for, besides the default one. */
const SUPPORTED_DOMAINS = new Set(["", "ai.onnx", "ai.onnx.ml", "com.microsoft"]);

/** What the run declares, in the checker's terms (the policy's fields, converted at the caller). */
export interface OnnxContract {
  /** `policy.action_space.dim`: the robot's degrees of freedom. */
  dof: number;
  /** `policy.observation_contract.cameras`. */
  cameras: readonly string[];
  /** `policy.observation_contract.state`, in order. */
  state: readonly string[];
  /** `policy.inference.chunk_size`. */
  chunkSize?: number;
  /** `policy.inference.action_horizon`. */
  actionHorizon?: number;
  /** `policy.inference.temp`. */
  temp?: number;
  /**
   * Frame sizes of the contract's cameras, where known (the coordinator: the fleet's nominal sizes);
   * an image input is bounded by them (input-bounds.ts), or by MAX_IMAGE_SIDE_PX without.
   */
  cameraSizes?: Readonly<Record<string, CameraSize>>;
}

/** How to feed the model and read its chunks; what checkOnnxContract found to be consistent. */
export interface OnnxIoPlan {
  /** Present when the model reads `observation.state`. */
  state?: { channels: StateChannel[]; width: number };
  /** One per image input; `height`/`width` undefined when symbolic (the frame is fed at its own size). */
  images: Array<{ camera: string; input: string; height?: number; width?: number }>;
  /** Present when the model reads `noise`: its dims with the batch dimension set to 1. */
  noise?: { dims: number[] };
  /** Rows per inference when known before running (fixed dimension or chunk_size); 1 for a one-step output. */
  chunk: number | undefined;
  /** Rows executed per inference; undefined = every row of each chunk. */
  actionHorizon: number | undefined;
  /** Scale of the noise input (default 1). */
  temp: number;
  dof: number;
}

const list = (names: readonly string[]) => (names.length ? names.join(", ") : "none");
const isFixed = (d: OnnxDim | undefined): d is number => typeof d === "number";
const isPositiveInteger = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v > 0;

/** Checks the batch dimension and element type of one input or output; returns its dims or undefined after a problem. */
function checkTensor(value: OnnxValueDescription, role: "input" | "output", problems: string[]): OnnxDim[] | undefined {
  const what = `the model's ${role} ${value.name}`;
  if (value.elementType !== "float32") {
    problems.push(`${what} is ${value.elementType}; Assay ${role === "input" ? "feeds" : "reads"} float32 (cast in the graph, or export in float32)`);
    return undefined;
  }
  if (value.dims === undefined || value.dims.length === 0) {
    problems.push(`${what} declares ${value.dims === undefined ? "no shape" : "a scalar shape"}; export it with its shape (batch dimension first)`);
    return undefined;
  }
  const batch = value.dims[0];
  if (isFixed(batch) && batch !== 1) {
    problems.push(`${what} has batch dimension ${batch} (${formatDims(value.dims)}); Assay runs one observation at a time: export the batch dimension as 1 or symbolic`);
    return undefined;
  }
  return value.dims;
}

function checkState(value: OnnxValueDescription, contract: OnnxContract, problems: string[]): OnnxIoPlan["state"] {
  const dims = checkTensor(value, "input", problems);
  if (!dims) return undefined;
  // An unknown channel is named once, by walk(); a width computed without it would mislead.
  if (!contract.state.every(isStateChannel)) return undefined;
  const channels = contract.state.filter(isStateChannel);
  const width = channels.reduce((sum, c) => sum + stateChannelWidth(c, contract.dof), 0);
  const made = `the contract's state channels ${channels.join(" + ")} make ${width}`;
  if (channels.length === 0) {
    problems.push(`the model reads ${STATE_INPUT}, but policy.observation_contract.state lists no channels; list the ones the model was trained on (${STATE_CHANNEL_NAMES.join(", ")})`);
    return undefined;
  }
  if (dims.length !== 2) {
    problems.push(`${STATE_INPUT} must be [1, S] (or [batch, S]); the model declares ${formatDims(dims)}`);
    return undefined;
  }
  if (!isFixed(dims[1])) {
    problems.push(`${STATE_INPUT} has a symbolic width (${JSON.stringify(dims[1])}); export it fixed: ${made}`);
    return undefined;
  }
  if (dims[1] !== width) {
    problems.push(`${STATE_INPUT} has ${dims[1]} values; ${made}`);
    return undefined;
  }
  return { channels, width };
}

function checkImage(value: OnnxValueDescription, camera: string, contract: OnnxContract, problems: string[]): OnnxIoPlan["images"][number] | undefined {
  if (!contract.cameras.includes(camera)) {
    problems.push(`the model reads ${value.name}, which is not in policy.observation_contract.cameras (${list(contract.cameras)})`);
    return undefined;
  }
  const dims = checkTensor(value, "input", problems);
  if (!dims) return undefined;
  if (dims.length !== 4 || dims[1] !== 3) {
    problems.push(`${value.name} must be [1, 3, H, W] (channels first, RGB in [0, 1]); the model declares ${formatDims(dims)}`);
    return undefined;
  }
  const [height, width] = [dims[2], dims[3]];
  for (const [name, d] of [["height", height], ["width", width]] as const) {
    if (isFixed(d) && d <= 0) {
      problems.push(`${value.name} has ${name} ${d}; it must be positive, or symbolic to receive the camera's own size`);
      return undefined;
    }
  }
  const size = contract.cameraSizes?.[camera];
  const max = maxImageInput(size);
  if ((isFixed(height) && height > max.height) || (isFixed(width) && width > max.width)) {
    const source = size ? `camera ${camera} gives ${size.width}x${size.height} frames, and an image input may be at most ${MAX_IMAGE_UPSCALE} times that` : `an image input may be at most ${max.width}x${max.height}`;
    problems.push(`the model's input ${value.name} declares ${formatDims(dims)}, ${isFixed(width) ? width : "?"}x${isFixed(height) ? height : "?"} pixels; ${source} (${max.width}x${max.height}): export it at the size it was trained on, or symbolic to receive the camera's own size`);
    return undefined;
  }
  return { camera, input: value.name, height: isFixed(height) ? height : undefined, width: isFixed(width) ? width : undefined };
}

function checkNoise(value: OnnxValueDescription, problems: string[]): OnnxIoPlan["noise"] {
  const dims = checkTensor(value, "input", problems);
  if (!dims) return undefined;
  const symbolic = dims.slice(1).filter((d) => !isFixed(d));
  if (symbolic.length > 0) {
    problems.push(`${NOISE_INPUT} has symbolic dimensions after the batch (${formatDims(dims)}); export it with fixed sizes, e.g. [1, chunk, action_dim]`);
    return undefined;
  }
  const values = (dims.slice(1) as number[]).reduce((a, b) => a * b, 1);
  if (values > MAX_NOISE_VALUES) {
    problems.push(`the model's input ${NOISE_INPUT} declares ${formatDims(dims)}, ${values} values; a noise input may have at most ${MAX_NOISE_VALUES} (a chunk of action rows, e.g. [1, chunk, action_dim])`);
    return undefined;
  }
  return { dims: [1, ...(dims.slice(1) as number[])] };
}

/** The action output's chunk rows (undefined = decided at run time), after checking it against the contract. */
function checkAction(description: OnnxModelDescription, contract: OnnxContract, chunkSize: number | undefined, problems: string[]): { ok: boolean; chunk: number | undefined } {
  const output = description.outputs.find((o) => o.name === ACTION_OUTPUT);
  if (!output) {
    problems.push(`the model has no output named ${ACTION_OUTPUT} (its outputs: ${list(description.outputs.map((o) => o.name))}); name the joint-target output ${ACTION_OUTPUT}`);
    return { ok: false, chunk: undefined };
  }
  const dims = checkTensor(output, "output", problems);
  if (!dims) return { ok: false, chunk: undefined };
  if (dims.length !== 2 && dims.length !== 3) {
    problems.push(`the model's output ${ACTION_OUTPUT} must be [1, chunk, dof] or [1, dof]; the model declares ${formatDims(dims)}`);
    return { ok: false, chunk: undefined };
  }
  const last = dims[dims.length - 1];
  if (!isFixed(last)) {
    problems.push(`the model's output ${ACTION_OUTPUT} has a symbolic last dimension (${JSON.stringify(last)}); export it fixed at policy.action_space.dim ${contract.dof}`);
  } else if (last !== contract.dof) {
    problems.push(`the model's output ${ACTION_OUTPUT} has last dimension ${last}; policy.action_space.dim is ${contract.dof}`);
  }
  if (dims.length === 2) {
    if (chunkSize !== undefined && chunkSize !== 1) problems.push(`policy.inference.chunk_size is ${chunkSize}, but the model's output ${ACTION_OUTPUT} ${formatDims(dims)} is one step; leave chunk_size out or set it to 1`);
    return { ok: true, chunk: 1 };
  }
  const declared = dims[1];
  if (isFixed(declared)) {
    if (declared <= 0) problems.push(`the model's output ${ACTION_OUTPUT} has chunk dimension ${declared}; it must be positive`);
    else if (declared > MAX_CHUNK_ROWS) problems.push(`the model's output ${ACTION_OUTPUT} has chunk dimension ${declared}; a chunk may have at most ${MAX_CHUNK_ROWS} rows`);
    else if (chunkSize !== undefined && chunkSize !== declared) problems.push(`policy.inference.chunk_size is ${chunkSize}; the model's output ${ACTION_OUTPUT} has chunk dimension ${declared}`);
    return { ok: true, chunk: declared };
  }
  return { ok: true, chunk: chunkSize };
}

function walk(description: OnnxModelDescription, contract: OnnxContract): { problems: string[]; plan: OnnxIoPlan } {
  const problems: string[] = [];
  if (description.externalDataTensors.length > 0) {
    const names = description.externalDataTensors;
    problems.push(`the model keeps ${names.length} weight tensor(s) in external data files (${list(names.slice(0, 3))}${names.length > 3 ? ", ..." : ""}), which an upload does not carry; export a single-file model (onnx.save(model, path, save_as_external_data=False); under 2 GB)`);
  }
  if (description.opset === undefined) {
    problems.push(`the model imports no ai.onnx opset; onnxruntime-web 1.30 on the cells runs opsets ${SUPPORTED_OPSETS.min} to ${SUPPORTED_OPSETS.max}`);
  } else if (description.opset < SUPPORTED_OPSETS.min || description.opset > SUPPORTED_OPSETS.max) {
    problems.push(`the model's opset is ${description.opset}; onnxruntime-web 1.30 on the cells runs opsets ${SUPPORTED_OPSETS.min} to ${SUPPORTED_OPSETS.max} (export with an opset_version in that range, e.g. 17)`);
  }
  for (const { domain, version } of description.opsetImports) {
    if (!SUPPORTED_DOMAINS.has(domain)) problems.push(`the model uses operators of domain ${JSON.stringify(domain)} (version ${version}), which onnxruntime-web cannot run`);
  }
  for (const channel of contract.state) {
    if (!isStateChannel(channel)) problems.push(`policy.observation_contract.state: unknown channel ${JSON.stringify(channel)}; the state channels are ${STATE_CHANNEL_NAMES.join(", ")}`);
  }

  const plan: OnnxIoPlan = { images: [], chunk: undefined, actionHorizon: contract.actionHorizon, temp: contract.temp ?? 1, dof: contract.dof };
  for (const input of description.inputs) {
    const camera = cameraOfInput(input.name);
    if (input.name === STATE_INPUT) plan.state = checkState(input, contract, problems);
    else if (camera !== undefined) {
      const image = checkImage(input, camera, contract, problems);
      if (image) plan.images.push(image);
    } else if (input.name === NOISE_INPUT) plan.noise = checkNoise(input, problems);
    else {
      problems.push(`the model reads an input named ${input.name}, which Assay does not provide; inputs must be named ${STATE_INPUT}, observation.images.<camera> (cameras: ${list(contract.cameras)}) or ${NOISE_INPUT}`);
    }
  }
  if (!description.inputs.some((i) => i.name === STATE_INPUT || cameraOfInput(i.name) !== undefined)) {
    problems.push(`the model reads no observation (its inputs: ${list(description.inputs.map((i) => i.name))}); it must read ${STATE_INPUT} or an observation.images.<camera>`);
  }

  const { actionHorizon, chunkSize, temp } = contract;
  if (chunkSize !== undefined && !isPositiveInteger(chunkSize)) {
    problems.push(`policy.inference.chunk_size must be a positive integer; got ${JSON.stringify(chunkSize)}`);
  }
  const action = checkAction(description, contract, isPositiveInteger(chunkSize) ? chunkSize : undefined, problems);
  plan.chunk = action.chunk;
  if (actionHorizon !== undefined && !isPositiveInteger(actionHorizon)) {
    problems.push(`policy.inference.action_horizon must be a positive integer; got ${JSON.stringify(actionHorizon)}`);
  } else if (actionHorizon !== undefined && action.ok && plan.chunk !== undefined && actionHorizon > plan.chunk) {
    problems.push(`policy.inference.action_horizon is ${actionHorizon}; it must be at most the model's chunk of ${plan.chunk} row${plan.chunk === 1 ? "" : "s"}`);
  }
  if (temp !== undefined && !(typeof temp === "number" && Number.isFinite(temp) && temp >= 0)) {
    problems.push(`policy.inference.temp must be a number >= 0; got ${JSON.stringify(temp)}`);
  } else if (temp !== undefined && !description.inputs.some((i) => i.name === NOISE_INPUT)) {
    problems.push(`policy.inference.temp is ${temp}, but the model has no ${NOISE_INPUT} input: without one the graph is deterministic and temp would change nothing; leave temp out, or export the sampler's noise as an input named ${NOISE_INPUT}`);
  }
  return { problems, plan };
}

/**
 * Every way the model's declared I/O disagrees with the run's contracts, in plain words naming the
 * field; empty when the model can run under them.
 */
export function checkOnnxContract(description: OnnxModelDescription, contract: OnnxContract): string[] {
  return walk(description, contract).problems;
}

/** The I/O plan for a model that passes checkOnnxContract; throws an Error listing the problems otherwise. */
export function planOnnxIo(description: OnnxModelDescription, contract: OnnxContract): OnnxIoPlan {
  const { problems, plan } = walk(description, contract);
  if (problems.length > 0) throw new Error(`the ONNX model does not fit the policy's contracts: ${problems.join("; ")}`);
  return plan;
}
