import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { CameraFrame, Observation } from "../../cell-agent/hardware/types.js";
import { CheckpointPolicyRuntime, type CheckpointRef, type CheckpointSource } from "../../cell-agent/policy/checkpoint-runtime.js";
import { CompositePolicyRuntime } from "../../cell-agent/policy/composite-runtime.js";
import { buildObservation, contractOf } from "../../cell-agent/episode/observation.js";
import { realizeEpisodePlan } from "../../cell-agent/episode/plan.js";
import { pickCubeTask } from "../../simulators/physics/pick-episode.js";
import { createSimulatedCell } from "../../simulators/sim-cell-hardware.js";
import type { PolicyObservation } from "../../protocol/policy/onnx/policy-observation.js";
import { cameraStatePolicy, linearStatePolicy, noisyLinearPolicy } from "../support/onnx-models.js";

// The agent's Observation must be usable wherever the ONNX policy reads one (checked by tsc).
const _observationFits = (o: Observation): PolicyObservation => o;
void _observationFits;

const ROBOT = { model: "so101", dof: 6 };

/** The coordinator's download, as far as the runtime can tell: bytes by checkpoint id. */
class FakeSource implements CheckpointSource {
  readonly loads: string[] = [];
  readonly files = new Map<string, Uint8Array>();

  add(id: string, bytes: Uint8Array): CheckpointRef {
    this.files.set(id, bytes);
    return { id, sha256: createHash("sha256").update(bytes).digest("hex"), bytes: bytes.length };
  }

  async load(ref: CheckpointRef): Promise<Uint8Array> {
    this.loads.push(ref.id);
    const bytes = this.files.get(ref.id);
    if (!bytes) throw new Error(`no checkpoint ${ref.id}`);
    return bytes;
  }
}

/** Row r of every chunk is the joint positions at the inference plus 0.1 * r: the row played is visible in the target. */
const CHUNK_OF_4 = linearStatePolicy({ stateWidth: 6, dof: 6, chunk: 4, bias: Array.from({ length: 24 }, (_, i) => 0.1 * Math.floor(i / 6)) });

function policyOf(checkpoint: CheckpointRef, inference: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: "checkpoint", hf: "acme/hold", runtime: "onnx", inference,
    action_space: { type: "joint_position", dim: 6 },
    observation_contract: { cameras: ["top"], state: ["joint_positions"] },
    checkpoint, ...extra,
  };
}

/** Joint positions all equal to `step`, so a target shows which step's observation it came from. */
const observationAt = (step: number): Observation => ({ tNs: BigInt(step) * 33_333_333n, jointPositionsRad: new Array(6).fill(step), cameras: {} });

/** The first joint's target for each step, rounded: `inferredAtStep + 0.1 * row`. */
async function firstTargets(session: { act(o: Observation): Promise<number[]> }, steps: number): Promise<number[]> {
  const out: number[] = [];
  for (let step = 0; step < steps; step++) {
    const targets = await session.act(observationAt(step));
    assert.equal(targets.length, 6);
    out.push(Math.round(targets[0] * 100) / 100);
  }
  return out;
}

describe("CheckpointPolicyRuntime", function () {
  this.timeout(30_000);
  let source: FakeSource;
  let runtime: CheckpointPolicyRuntime;
  beforeEach(() => {
    source = new FakeSource();
    runtime = new CheckpointPolicyRuntime(source);
  });
  afterEach(() => runtime.close());

  it("plays action_horizon rows of each chunk, then infers again: horizon 2 of chunk 4 infers every 2 steps", async () => {
    const session = await runtime.start(policyOf(source.add("ckpt-1", CHUNK_OF_4), { action_horizon: 2, chunk_size: 4 }), ROBOT);
    await session.reset({ seed: 1, controlRateHz: 30 });
    assert.deepEqual(await firstTargets(session, 6), [0, 0.1, 2, 2.1, 4, 4.1]);
    await session.close();
  });

  it("plays the whole chunk when action_horizon is left out, and starts afresh on reset", async () => {
    const session = await runtime.start(policyOf(source.add("ckpt-1", CHUNK_OF_4)), ROBOT);
    await session.reset({ seed: 1, controlRateHz: 30 });
    assert.deepEqual(await firstTargets(session, 6), [0, 0.1, 0.2, 0.3, 4, 4.1]);
    await session.reset({ seed: 2, controlRateHz: 30 });
    assert.deepEqual(await firstTargets(session, 2), [0, 0.1], "the rest of the last chunk is dropped");
    await session.close();
  });

  it("infers every step for a one-step model", async () => {
    const session = await runtime.start(policyOf(source.add("one-step", linearStatePolicy({ stateWidth: 6, dof: 6, bias: [0.5, 0, 0, 0, 0, 0] }))), ROBOT);
    await session.reset({ seed: 1, controlRateHz: 30 });
    assert.deepEqual(await firstTargets(session, 3), [0.5, 1.5, 2.5]);
    await session.close();
  });

  it("refuses a horizon longer than the chunk a symbolic-chunk model returns", async () => {
    const symbolic = linearStatePolicy({ stateWidth: 6, dof: 6, chunk: 4, chunkDim: "chunk" });
    const session = await runtime.start(policyOf(source.add("symbolic", symbolic), { action_horizon: 5 }), ROBOT);
    await session.reset({ seed: 1, controlRateHz: 30 });
    await assert.rejects(session.act(observationAt(0)), /^Error: policy.inference.action_horizon is 5, but the model returned a chunk of 4 rows$/);
    await session.close();
  });

  it("refuses bytes whose sha256 or size is not the checkpoint's", async () => {
    const ref = source.add("ckpt-1", CHUNK_OF_4);
    const tampered = Uint8Array.from(CHUNK_OF_4);
    tampered[tampered.length - 1] ^= 1;
    source.files.set("ckpt-1", tampered);
    await assert.rejects(runtime.start(policyOf(ref), ROBOT), (error: Error) =>
      error.message.startsWith(`checkpoint ckpt-1 loaded bytes with sha256 ${createHash("sha256").update(tampered).digest("hex")}; the coordinator resolved it to ${ref.sha256}; refusing to run them`));
    source.files.set("ckpt-1", CHUNK_OF_4.subarray(1));
    await assert.rejects(runtime.start(policyOf(ref), ROBOT), new RegExp(`^Error: checkpoint ckpt-1 loaded ${CHUNK_OF_4.length - 1} bytes; the coordinator resolved it to ${CHUNK_OF_4.length}$`));
    source.files.set("ckpt-1", CHUNK_OF_4);
    const session = await runtime.start(policyOf(ref), ROBOT);
    await session.close();
    assert.deepEqual(source.loads, ["ckpt-1", "ckpt-1", "ckpt-1"], "a refused load is not kept");
  });

  it("refuses a runtime other than onnx, listing the supported ones", async () => {
    const ref = source.add("ckpt-1", CHUNK_OF_4);
    await assert.rejects(runtime.start(policyOf(ref, {}, { runtime: "torchscript" }), ROBOT), /^Error: policy.runtime "torchscript" is not supported; supported runtimes: onnx$/);
    await assert.rejects(runtime.start(policyOf(ref, {}, { runtime: undefined }), ROBOT), /^Error: policy.runtime is missing; supported runtimes: onnx$/);
    assert.deepEqual(source.loads, [], "nothing downloaded for a policy it cannot run");
  });

  it("refuses a policy without a resolved checkpoint", async () => {
    await assert.rejects(runtime.start(policyOf({ id: "x", sha256: "abc", bytes: 1 }), ROBOT), /^Error: the policy carries no resolved checkpoint \{id, sha256, bytes\}; got \{"id":"x","sha256":"abc","bytes":1\}/);
  });

  it("checks the model against the contracts again, and the action space against the robot", async () => {
    const sevenJoints = source.add("seven", linearStatePolicy({ stateWidth: 6, dof: 7, chunk: 2 }));
    await assert.rejects(runtime.start(policyOf(sevenJoints), ROBOT), /^Error: the ONNX model does not fit the policy's contracts: the model's output action has last dimension 7; policy.action_space.dim is 6$/);
    await assert.rejects(
      runtime.start(policyOf(source.add("ckpt-1", CHUNK_OF_4), {}, { action_space: { type: "joint_position", dim: 7 } }), ROBOT),
      /^Error: policy.action_space.dim is 7; so101 has 6 degrees of freedom$/,
    );
  });

  it("keeps the last model loaded for the next episode of the same checkpoint", async () => {
    const first = source.add("ckpt-1", CHUNK_OF_4);
    const second = source.add("ckpt-2", linearStatePolicy({ stateWidth: 6, dof: 6, chunk: 4 }));
    for (const ref of [first, first, second, first]) {
      const session = await runtime.start(policyOf(ref, { action_horizon: 2 }), ROBOT);
      await session.reset({ seed: 1, controlRateHz: 30 });
      assert.deepEqual(await firstTargets(session, 2), ref === first ? [0, 0.1] : [0, 0]);
      await session.close();
    }
    assert.deepEqual(source.loads, ["ckpt-1", "ckpt-2", "ckpt-1"]);
  });

  it("seeds a noise input with the episode's seed", async () => {
    const ref = source.add("noisy", noisyLinearPolicy({ stateWidth: 6, dof: 6, chunk: 2 }));
    const episode = async (seed: number) => {
      const session = await runtime.start(policyOf(ref, { temp: 0.3 }), ROBOT);
      await session.reset({ seed, controlRateHz: 30 });
      const targets = [await session.act(observationAt(0)), await session.act(observationAt(1))];
      await session.close();
      return targets;
    };
    assert.deepEqual(await episode(5), await episode(5));
    assert.notDeepEqual(await episode(5), await episode(6));
  });

  it("keeps a simulated so101 at its home pose with the hold-pose models, reading the top camera or not", async () => {
    const models = {
      state: linearStatePolicy({ stateWidth: 7, dof: 6, chunk: 8 }),
      camera: cameraStatePolicy({ stateWidth: 7, dof: 6, chunk: 8, camera: "top", height: 96, width: 128, imageGain: 0 }),
    };
    for (const [name, bytes] of Object.entries(models)) {
      const cell = await createSimulatedCell({ model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 3, speed: Infinity, devices: "in-process" });
      try {
        const plan = realizeEpisodePlan({ task: pickCubeTask(), perturbation: { layoutJitterMm: 10, lighting: ["nominal"], distractors: "none" }, seed: 3, dof: 6, environment: "tabletop@1" });
        await cell.scene.reset(plan.reset);
        const policy = {
          ...policyOf(source.add(name, bytes), { action_horizon: 4, chunk_size: 8 }),
          observation_contract: { cameras: name === "camera" ? ["top"] : [], state: ["joint_positions", "gripper_state"] },
        };
        const session = await runtime.start(policy, ROBOT);
        await session.reset({ seed: 3, controlRateHz: 30 });
        await cell.motors.setTorque(true);
        const contract = contractOf(policy);
        const home = (await cell.motors.readState()).positionRad;
        let deviationRad = 0;
        let next = cell.clock.nowNs();
        for (let step = 0; step < 90; step++) {
          const frames = new Map<string, CameraFrame>();
          for (const camera of cell.cameras) frames.set(camera.name, await camera.capture());
          const joints = await cell.motors.readState();
          const gripperOpening = (await cell.gripper!.read()).opening;
          await cell.motors.writeGoalPositions(await session.act(buildObservation(contract, { tNs: cell.clock.nowNs(), joints, gripperOpening, frames })));
          deviationRad = Math.max(deviationRad, ...joints.positionRad.map((p, i) => Math.abs(p - home[i])));
          next += 1_000_000_000n / 30n;
          await cell.clock.sleepUntil(next);
        }
        await session.close();
        assert.ok(deviationRad < 0.01, `${name}: a joint moved ${deviationRad.toFixed(4)} rad from home in 3 s`);
      } finally {
        await cell.close();
      }
    }
  });

  it("takes the checkpoint policies of a composite runtime", async () => {
    const composite = new CompositePolicyRuntime([runtime, { available: () => [], start: () => Promise.reject(new Error("not for checkpoints")) }]);
    const session = await composite.start(policyOf(source.add("ckpt-1", CHUNK_OF_4)), ROBOT);
    await session.reset({ seed: 1, controlRateHz: 30 });
    assert.deepEqual(await firstTargets(session, 1), [0]);
    await session.close();
    assert.deepEqual(runtime.available(), []);
  });
});
