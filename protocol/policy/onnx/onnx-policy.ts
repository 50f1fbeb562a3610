/**
 * An ONNX checkpoint loaded into onnxruntime-web (the WebAssembly build, single-threaded) and run
 * on observations under the I/O convention of io-convention.ts: one `infer` call builds the inputs,
 * runs the graph and returns the action chunk as rows of joint targets.
 *
 * The runtime's .wasm is read from node_modules/onnxruntime-web/dist on the first load (about
 * 0.3 s, once per process); nothing is fetched over the network. onnxruntime-web itself is loaded
 * by the first `OnnxPolicy.load`, not with the process: only cells that run ONNX checkpoints need it.
 */
import type * as Ort from "onnxruntime-web";
import { loadPackage } from "../../load-package.js";
import { planOnnxIo, type OnnxContract, type OnnxIoPlan } from "./contract-check.js";
import { imageTensorData } from "./image-input.js";
import { ACTION_OUTPUT, NOISE_INPUT, STATE_INPUT } from "./io-convention.js";
import { describeOnnxBytes, type OnnxModelDescription } from "./model-description.js";
import type { GaussianNoise } from "./noise-input.js";
import { stateVector, type PolicyObservation } from "./policy-observation.js";

type OrtModule = typeof Ort;

/** onnxruntime-web, configured; rejects with a plain message when it cannot be loaded. */
async function loadOnnxRuntime(): Promise<OrtModule> {
  const ort = await loadPackage(() => import("onnxruntime-web"), "the ONNX runtime (onnxruntime-web)");
  // One thread: a cell's cores belong to its control loop, cameras and recorder as much as to the
  // policy, and threads would need worker files and cross-origin isolation that Node does not give.
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = "error";
  return ort;
}

/** A loaded ONNX checkpoint and the I/O plan its contract check produced; holds no per-episode state. */
export class OnnxPolicy {
  private constructor(
    private readonly ort: OrtModule,
    private readonly session: Ort.InferenceSession,
    readonly description: OnnxModelDescription,
    readonly plan: OnnxIoPlan,
  ) {}

  /**
   * Describes the model (the bounded reader, pausing for the event loop), checks it against the
   * contract, including the bounds of input-bounds.ts (throws listing every problem), and only then
   * creates an inference session: a model whose inputs do not fit the robot and its cameras fails
   * here, before onnxruntime or any input buffer is allocated.
   */
  static async load(bytes: Uint8Array, contract: OnnxContract): Promise<OnnxPolicy> {
    const description = await describeOnnxBytes(bytes);
    const plan = planOnnxIo(description, contract);
    const ort = await loadOnnxRuntime();
    let session: Ort.InferenceSession;
    try {
      session = await ort.InferenceSession.create(bytes, { executionProviders: ["wasm"], graphOptimizationLevel: "all" });
    } catch (error) {
      throw new Error(`onnxruntime-web could not load the model: ${(error as Error).message}`);
    }
    return new OnnxPolicy(ort, session, description, plan);
  }

  /**
   * One inference: the action chunk, `chunk` rows of `dof` joint targets (one row for a one-step
   * model). `noise` is required when the model reads a noise input (the episode's seeded generator).
   */
  async infer(observation: PolicyObservation, noise?: GaussianNoise): Promise<number[][]> {
    const feeds = await this.inputs(observation, noise);
    let results: Ort.InferenceSession.OnnxValueMapType;
    try {
      results = await this.session.run(feeds, [ACTION_OUTPUT]);
    } catch (error) {
      throw new Error(`the ONNX model failed to run: ${(error as Error).message}`);
    } finally {
      for (const tensor of Object.values(feeds)) tensor.dispose();
    }
    const action = results[ACTION_OUTPUT];
    try {
      return this.rows(action);
    } finally {
      action.dispose();
    }
  }

  /** Frees the session's WebAssembly memory; the policy cannot infer afterwards. */
  async release(): Promise<void> {
    await this.session.release();
  }

  private async inputs(observation: PolicyObservation, noise: GaussianNoise | undefined): Promise<Record<string, Ort.Tensor>> {
    const { plan } = this;
    const feeds: Record<string, Ort.Tensor> = {};
    if (plan.state) feeds[STATE_INPUT] = new this.ort.Tensor("float32", stateVector(observation, plan.state.channels, plan.dof), [1, plan.state.width]);
    const images = await Promise.all(plan.images.map(async (image) => {
      const frame = observation.cameras[image.camera];
      if (!frame) throw new Error(`the observation has no frame from camera ${image.camera}, which the model reads as ${image.input}`);
      return { image, tensor: await imageTensorData(image.camera, frame, image) };
    }));
    for (const { image, tensor } of images) feeds[image.input] = new this.ort.Tensor("float32", tensor.data, [1, 3, tensor.height, tensor.width]);
    if (plan.noise) {
      if (!noise) throw new Error(`the model reads ${NOISE_INPUT}: pass the episode's noise generator to infer()`);
      feeds[NOISE_INPUT] = new this.ort.Tensor("float32", noise.sample(plan.noise.dims.reduce((a, b) => a * b, 1)), plan.noise.dims);
    }
    return feeds;
  }

  /** The output tensor as rows, checked against dof, the expected chunk and finiteness. */
  private rows(action: Ort.Tensor): number[][] {
    const { dof, chunk } = this.plan;
    const dims = action.dims;
    const shape = `[${dims.join(", ")}]`;
    if (action.type !== "float32") throw new Error(`the model's ${ACTION_OUTPUT} came out ${action.type}; float32 expected`);
    if ((dims.length !== 2 && dims.length !== 3) || dims[0] !== 1 || dims[dims.length - 1] !== dof) {
      throw new Error(`the model's ${ACTION_OUTPUT} came out ${shape}; [1, chunk, ${dof}] or [1, ${dof}] expected`);
    }
    const count = dims.length === 3 ? dims[1] : 1;
    if (count === 0 || (chunk !== undefined && count !== chunk)) {
      throw new Error(`the model's ${ACTION_OUTPUT} came out with ${count} rows (${shape}); ${chunk ?? "at least 1"} expected (policy.inference.chunk_size)`);
    }
    const data = action.data as Float32Array;
    const out: number[][] = [];
    for (let r = 0; r < count; r++) out.push(Array.from(data.subarray(r * dof, (r + 1) * dof)));
    const bad = out.findIndex((row) => !row.every(Number.isFinite));
    if (bad >= 0) throw new Error(`the model's ${ACTION_OUTPUT} row ${bad} is not finite: [${out[bad].join(", ")}]`);
    return out;
  }
}
