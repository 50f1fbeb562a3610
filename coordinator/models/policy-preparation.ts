/**
 * What a submission checks of its policies beyond their declared contracts (policy-checks.ts),
 * before anything is stored:
 *
 * - checkpoint policies: the runtime is one the cells have (onnx); `hf` resolves to a model of the
 *   account or of the operator's mirror; the model's declared inputs and outputs fit the policy's
 *   `action_space`, `observation_contract` and `inference`. The resolved model (id, sha256, bytes)
 *   is pinned in the run's `resolved_pins.models`, keyed by `hf` as submitted.
 * - endpoint policies: `observation_map` (openpi) resolves against the contract, then a pre-flight
 *   (protocol/policy/endpoint-preflight.ts) connects to the endpoint, sends one observation of the
 *   shape the episodes will send, and checks the action shape that comes back.
 *
 * `checkPolicyModels` is synchronous (quotes price a body without touching endpoints);
 * `preparePolicies` does the slow part: mirror imports and pre-flights. Both throw the spec's 422
 * contract_validation_failed with a message naming the policy and saying what was received.
 */
import { checkOnnxContract, SUPPORTED_RUNTIMES } from "../../protocol/policy/onnx/contract-check.js";
import { onnxContractOf } from "../../protocol/policy/onnx/contract-from-policy.js";
import { nominalCameraSize } from "../../protocol/policy/onnx/input-bounds.js";
import type { OnnxModelDescription } from "../../protocol/policy/onnx/model-description.js";
import { preflightEndpoint, PreflightError } from "../../protocol/policy/endpoint-preflight.js";
import { ObservationMapError, resolveObservationMap } from "../../protocol/policy/openpi/observation-map.js";
import { cameraNames, findEnvironment, type CatalogEnvironment } from "../catalog/environments.js";
import type { FirmwarePins } from "../../firmware-pins/pins.js";
import type { RunUnit } from "../domain/units.js";
import { importMirroredModel, mirrorFileOf } from "./model-mirror.js";
import { parseModelRef, refText, type PinnedModel } from "../runs/model-ref.js";
import type { ObjectStore } from "../storage/object-store.js";
import type { Db } from "../store/database.js";
import { findLiveModel, getModel, type ModelRow } from "../store/models-repo.js";
import { contract, q } from "../runs/field-checks.js";


export interface PolicyPreparationContext {
  db: Db;
  pins: FirmwarePins;
  accountId: string;
  /** The artifact store, where uploaded and mirrored models are kept. */
  objects: ObjectStore;
  /** The operator's local model mirror, if any. */
  modelMirror?: string;
  /** Pre-flight of endpoint policies: how long to wait for the endpoint, or "off" (tests of other things). */
  preflight: { timeoutMs: number } | "off";
  clock: () => Date;
  /** Environment catalogue (a contract without cameras or state sees the scene's). */
  environments: readonly CatalogEnvironment[];
}

/** The preparation context of an account, from the API's (or a submission's) dependencies. */
export function preparationContextOf(
  deps: Pick<PolicyPreparationContext, "db" | "pins" | "objects" | "preflight" | "clock" | "environments"> & { modelMirror: string | null },
  accountId: string,
): PolicyPreparationContext {
  return {
    db: deps.db, pins: deps.pins, accountId, objects: deps.objects, modelMirror: deps.modelMirror ?? undefined,
    preflight: deps.preflight, clock: deps.clock, environments: deps.environments,
  };
}

/** The cameras and state channels of a unit's scene. */
function sceneOf(ctx: PolicyPreparationContext, unit: RunUnit): { cameras: string[]; state: string[] } {
  const env = findEnvironment(ctx.environments, unit.environment);
  if (!env) return { cameras: [], state: [] };
  const kinds = new Set(env.instruments.map((i) => i.kind));
  const state = [...(kinds.has("joint_states") ? ["joint_positions", "joint_velocities"] : []), ...(kinds.has("gripper_state") ? ["gripper_state"] : []), ...(kinds.has("ft_wrist") ? ["ft_wrist"] : [])];
  return { cameras: cameraNames(env), state };
}

/** Camera sizes a pre-flight sends for the JSON protocol: the cells' nominal sizes. */
const NOMINAL_CAMERA = (name: string) => ({ name, ...nominalCameraSize(name) });

interface PolicyFields {
  type: string;
  hf?: string;
  runtime?: string;
  protocol?: string;
  url?: string;
  inference?: { action_horizon?: number; chunk_size?: number; temp?: number };
  observation_map?: unknown;
  action_space?: { dim: number };
  observation_contract?: { cameras?: string[]; state?: string[] };
}

/** "policy" for a one-policy run, "policies.b" for a compare: the field the messages name. */
function whereOf(unit: RunUnit): string {
  return unit.policy_name !== undefined ? `policies.${unit.policy_name}` : "policy";
}

function dofOf(pins: FirmwarePins, unit: RunUnit): number {
  const model = pins.models.find((m) => m.id === unit.model);
  if (!model) throw new Error(`unit ${unit.key}: robot model ${unit.model} is not in the firmware pins`);
  return model.dof;
}

function checkModelFits(row: ModelRow, policy: PolicyFields, unit: RunUnit, ctx: PolicyPreparationContext, where: string): void {
  const onnxContract = onnxContractOf(policy as unknown as Record<string, unknown>, dofOf(ctx.pins, unit));
  // Every declared input is bounded by what the robot and its cameras produce (input-bounds.ts).
  const cameraSizes = Object.fromEntries(onnxContract.cameras.map((camera) => [camera, nominalCameraSize(camera)]));
  const problems = checkOnnxContract(JSON.parse(row.description!) as OnnxModelDescription, { ...onnxContract, cameraSizes });
  if (problems.length > 0) contract(`${where}.hf ${q(policy.hf)} (model ${row.id}) does not fit the policy: ${problems.join("; ")}`);
}

/** The account's ready model a checkpoint policy names, else the mirror's file for it; 422 when neither has it. */
async function resolveCheckpoint(policy: PolicyFields, ctx: PolicyPreparationContext, where: string): Promise<ModelRow | { mirrorFile: string; name: string; revision: string }> {
  if (!(SUPPORTED_RUNTIMES as readonly string[]).includes(policy.runtime ?? "")) {
    contract(`${where}.runtime ${q(policy.runtime)} is not supported; cells run checkpoints with: ${SUPPORTED_RUNTIMES.join(", ")}`);
  }
  const ref = parseModelRef(policy.hf ?? "", `${where}.hf`);
  if (ref.kind === "id") {
    const row = await getModel(ctx.db, ref.id);
    if (!row || row.account_id !== ctx.accountId) contract(`${where}.hf: no model ${q(ref.id)} on this account`);
    if (row.status !== "ready") contract(`${where}.hf: model ${row.id} is ${row.status}${row.status === "uploading" ? ` (${row.received_bytes} of ${row.bytes} bytes received)` : ""}; only a ready model can run`);
    return row;
  }
  const row = await findLiveModel(ctx.db, ctx.accountId, ref.name, ref.revision);
  if (row?.status === "ready") return row;
  if (row?.status === "uploading") {
    contract(`${where}.hf: model ${refText(ref.name, ref.revision)} (${row.id}) is still uploading (${row.received_bytes} of ${row.bytes} bytes received); submit once it is ready`);
  }
  const mirrorFile = mirrorFileOf(ctx.modelMirror, ref.name, ref.revision);
  if (mirrorFile) return { mirrorFile, name: ref.name, revision: ref.revision };
  contract(
    `${where}.hf: no model ${q(refText(ref.name, ref.revision))} on this account${ctx.modelMirror ? " or in the operator's model mirror" : ""}; ` +
      `cells cannot reach a model hub, so upload it first (POST /v1/models, then PUT its bytes) and reference it by name or id`,
  );
}

/** Synchronous checks of every unit's checkpoint and endpoint policy (see the file's comment). */
export async function checkPolicyModels(units: readonly RunUnit[], ctx: PolicyPreparationContext): Promise<void> {
  for (const unit of units) {
    const policy = unit.policy as unknown as PolicyFields;
    const where = whereOf(unit);
    if (policy.type === "checkpoint") {
      const resolved = await resolveCheckpoint(policy, ctx, where);
      if ("id" in resolved) checkModelFits(resolved, policy, unit, ctx, where);
    } else if (policy.type === "endpoint" && policy.protocol === "openpi") {
      // A contract that leaves cameras or state out shows the policy everything the scene has.
      const scene = sceneOf(ctx, unit);
      try {
        resolveObservationMap(policy.observation_map, {
          cameras: policy.observation_contract?.cameras ?? scene.cameras, state: policy.observation_contract?.state ?? scene.state, dof: policy.action_space?.dim ?? dofOf(ctx.pins, unit),
        });
      } catch (error) {
        if (error instanceof ObservationMapError) contract(where === "policy" ? error.message : `${where}: ${error.message}`);
        throw error;
      }
    } else if (policy.type === "endpoint" && (policy.observation_map !== undefined || policy.inference !== undefined)) {
      contract(`${where}: observation_map and inference belong to protocol "openpi"; the default JSON protocol sends every observation and takes one action per step`);
    }
  }
}

/**
 * Mirror imports and endpoint pre-flights; returns the models to pin (`resolved_pins.models`).
 * Call after checkPolicyModels.
 */
export async function preparePolicies(units: readonly RunUnit[], ctx: PolicyPreparationContext): Promise<Record<string, PinnedModel>> {
  const models: Record<string, PinnedModel> = {};
  const preflighted = new Set<string>();
  for (const unit of units) {
    const policy = unit.policy as unknown as PolicyFields;
    const where = whereOf(unit);
    if (policy.type === "checkpoint") {
      let resolved = await resolveCheckpoint(policy, ctx, where);
      if (!("id" in resolved)) {
        resolved = await importMirroredModel(ctx.db, ctx.objects, ctx.accountId, resolved.name, resolved.revision, resolved.mirrorFile, ctx.clock);
        checkModelFits(resolved, policy, unit, ctx, where);
      }
      models[policy.hf!] = { id: resolved.id, sha256: resolved.sha256, bytes: resolved.bytes, source: resolved.source };
    } else if (policy.type === "endpoint" && ctx.preflight !== "off") {
      const key = JSON.stringify(policy);
      if (preflighted.has(key)) continue;
      preflighted.add(key);
      const scene = sceneOf(ctx, unit);
      try {
        await preflightEndpoint(policy as never, {
          dof: policy.action_space?.dim ?? dofOf(ctx.pins, unit), cameras: scene.cameras.map(NOMINAL_CAMERA), state: scene.state, timeoutMs: ctx.preflight.timeoutMs,
        });
      } catch (error) {
        if (error instanceof PreflightError) contract(`${where}: pre-flight of ${policy.url} failed: ${(error as Error).message}`);
        throw error;
      }
    }
  }
  return models;
}
