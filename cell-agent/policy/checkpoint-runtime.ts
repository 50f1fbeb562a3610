/**
 * Policy type `checkpoint`: the customer's uploaded model runs on the cell. The coordinator
 * resolves `policy.hf` to `checkpoint: {id, sha256, bytes}` before assigning an episode; the
 * runtime gets the bytes from a CheckpointSource, verifies them, checks the model against the
 * policy's contracts again and runs it with onnxruntime-web (`runtime: "onnx"`, the only one).
 *
 * Chunked execution: each inference yields a chunk of joint-target rows; the session plays
 * `inference.action_horizon` of them (default: all), one per control step, then infers again on
 * the observation of that step.
 *
 * The last model loaded stays loaded for the next episode of the same checkpoint (a run's episodes
 * come in a row), so only the first episode pays download, hash and session creation.
 */
import { createHash } from "node:crypto";
import { SUPPORTED_RUNTIMES, type OnnxContract } from "../../protocol/policy/onnx/contract-check.js";
import { onnxContractOf } from "../../protocol/policy/onnx/contract-from-policy.js";
import { GaussianNoise } from "../../protocol/policy/onnx/noise-input.js";
import { OnnxPolicy } from "../../protocol/policy/onnx/onnx-policy.js";
import type { Observation, PolicyRobot, PolicyRuntime, PolicySession } from "../hardware/types.js";

/** A checkpoint as the coordinator resolved it: its upload id, content hash and size. */
export interface CheckpointRef {
  id: string;
  /** Lower-case hex SHA-256 of the model file. */
  sha256: string;
  bytes: number;
}

/** Where the runtime gets a checkpoint's bytes (the coordinator's download, behind a cache). */
export interface CheckpointSource {
  load(ref: CheckpointRef): Promise<Uint8Array>;
}

/** Reads `policy.checkpoint` and `policy.runtime`; throws naming what is missing or unsupported. */
export function checkpointRefOf(policy: Record<string, unknown>): CheckpointRef {
  const runtime = policy.runtime;
  if (!(SUPPORTED_RUNTIMES as readonly unknown[]).includes(runtime)) {
    throw new Error(`policy.runtime ${runtime === undefined ? "is missing" : `${JSON.stringify(runtime)} is not supported`}; supported runtimes: ${SUPPORTED_RUNTIMES.join(", ")}`);
  }
  const ref = policy.checkpoint as Partial<CheckpointRef> | undefined;
  if (!ref || typeof ref.id !== "string" || typeof ref.sha256 !== "string" || !/^[0-9a-fA-F]{64}$/.test(ref.sha256) || !Number.isInteger(ref.bytes)) {
    throw new Error(`the policy carries no resolved checkpoint {id, sha256, bytes}; got ${JSON.stringify(ref ?? null)} (the coordinator resolves policy.hf before assigning an episode)`);
  }
  return { id: ref.id, sha256: ref.sha256.toLowerCase(), bytes: ref.bytes as number };
}

/** Checks that the loaded bytes are the checkpoint the coordinator resolved. */
export function verifyCheckpoint(ref: CheckpointRef, bytes: Uint8Array): void {
  if (bytes.length !== ref.bytes) throw new Error(`checkpoint ${ref.id} loaded ${bytes.length} bytes; the coordinator resolved it to ${ref.bytes}`);
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  if (sha256 !== ref.sha256) throw new Error(`checkpoint ${ref.id} loaded bytes with sha256 ${sha256}; the coordinator resolved it to ${ref.sha256}; refusing to run them`);
}

/** One episode of a loaded checkpoint: the rows left of the current chunk and the episode's noise. */
class CheckpointSession implements PolicySession {
  private rows: number[][] = [];
  private noise: GaussianNoise;
  private closed = false;

  constructor(private readonly policy: OnnxPolicy, private readonly onClose: () => void) {
    this.noise = new GaussianNoise(0, policy.plan.temp);
  }

  async reset(info: { seed: number }): Promise<void> {
    this.rows = [];
    this.noise = new GaussianNoise(info.seed, this.policy.plan.temp);
  }

  async act(observation: Observation): Promise<number[]> {
    if (this.rows.length === 0) {
      const chunk = await this.policy.infer(observation, this.noise);
      const { actionHorizon, dof } = this.policy.plan;
      const horizon = actionHorizon ?? chunk.length;
      if (horizon > chunk.length) throw new Error(`policy.inference.action_horizon is ${horizon}, but the model returned a chunk of ${chunk.length} rows`);
      const bad = chunk.findIndex((row) => row.length !== dof);
      if (bad >= 0) throw new Error(`the model's action row ${bad} has ${chunk[bad].length} values; policy.action_space.dim is ${dof}`);
      this.rows = chunk.slice(0, horizon);
    }
    return this.rows.shift()!;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
  }
}

/** A loaded model and the sessions using it; released once unused and no longer the latest. */
interface LoadedModel {
  key: string;
  policy: Promise<OnnxPolicy>;
  users: number;
}

/** Starts checkpoint policies; handles `type: "checkpoint"` only. */
export class CheckpointPolicyRuntime implements PolicyRuntime {
  readonly policyTypes = ["checkpoint"] as const;
  private latest: LoadedModel | undefined;

  constructor(private readonly source: CheckpointSource) {}

  /** Checkpoints are uploaded per run, not installed on the cell: nothing to advertise. */
  available(): string[] {
    return [];
  }

  async start(policy: Record<string, unknown>, robot: PolicyRobot): Promise<PolicySession> {
    const ref = checkpointRefOf(policy);
    // The cameras' own sizes bound the model's image inputs (input-bounds.ts); checked before anything is allocated.
    const contract = { ...onnxContractOf(policy, robot.dof), ...(robot.cameras ? { cameraSizes: robot.cameras } : {}) };
    if (contract.dof !== robot.dof) throw new Error(`policy.action_space.dim is ${contract.dof}; ${robot.model} has ${robot.dof} degrees of freedom`);
    const key = JSON.stringify([ref.sha256, contract]);
    if (this.latest?.key !== key) {
      const previous = this.latest;
      this.latest = { key, users: 0, policy: this.load(ref, contract) };
      if (previous && previous.users === 0) void this.release(previous);
    }
    const entry = this.latest;
    entry.users++;
    let loaded: OnnxPolicy;
    try {
      loaded = await entry.policy;
    } catch (error) {
      entry.users--;
      if (this.latest === entry) this.latest = undefined; // a failed load is tried afresh next time
      throw error;
    }
    return new CheckpointSession(loaded, () => {
      entry.users--;
      if (entry.users === 0 && this.latest !== entry) void this.release(entry);
    });
  }

  /** Releases the loaded model (e.g. when the agent stops); sessions still open keep theirs until closed. */
  async close(): Promise<void> {
    const entry = this.latest;
    this.latest = undefined;
    if (entry && entry.users === 0) await this.release(entry);
  }

  private async load(ref: CheckpointRef, contract: OnnxContract): Promise<OnnxPolicy> {
    const bytes = await this.source.load(ref);
    verifyCheckpoint(ref, bytes);
    return OnnxPolicy.load(bytes, contract);
  }

  private async release(entry: LoadedModel): Promise<void> {
    await entry.policy.then((p) => p.release(), () => undefined);
  }
}
