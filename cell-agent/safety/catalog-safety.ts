/**
 * Per-model safety limits from the robot catalogue (firmware-pins/catalog.json, each model's `safety`
 * section): the envelope's defaults (change per step, joint limits, workspace box) and the servos'
 * effort limit. The agent config's `safety.envelope` and `motors.effortLimitPercent` override them.
 *
 *   "safety": { "maxStepRad": 0.5 | {"<joint>": rad, ...}, "jointLimitsRad": {"<joint>": [min, max]},
 *               "workspaceBoxM": {"minM": [x, y, z], "maxM": [x, y, z]} | null, "effortLimitPercent": 1..100 | null }
 *
 * A model without the section, or without a key, gets the envelope's built-in default for it
 * (0.5 rad per step, no joint limits, no box, no effort limit).
 */
import { loadFirmwarePins, type RobotModel } from "../../firmware-pins/pins.js";

/** An axis-aligned box in the robot's base frame that the fingertip must stay inside, metres. */
export interface WorkspaceBox {
  minM: [number, number, number];
  maxM: [number, number, number];
}

/** The envelope defaults a catalogue model gives. */
export interface CatalogEnvelope {
  maxStepRad?: number | Record<string, number>;
  jointLimitsRad?: Record<string, [number, number]>;
  workspaceBoxM?: WorkspaceBox | null;
}

export interface CatalogSafety {
  envelope: CatalogEnvelope;
  /** Effort limit written to the servos on open, percent of full scale; null: the servos keep theirs. */
  effortLimitPercent: number | null;
}

const KEYS = ["maxStepRad", "jointLimitsRad", "workspaceBoxM", "effortLimitPercent"];

let cache: Map<string, CatalogSafety> | undefined;

/** The catalogue's safety section of `modelId`, checked (throws naming the model and key). Unknown models get none. */
export function catalogSafety(modelId: string, models?: readonly RobotModel[]): CatalogSafety {
  if (models) {
    const model = models.find((m) => m.id === modelId);
    return model ? parseCatalogSafety(model) : { envelope: {}, effortLimitPercent: null };
  }
  cache ??= new Map(loadFirmwarePins().models.map((m) => [m.id, parseCatalogSafety(m)]));
  return cache.get(modelId) ?? { envelope: {}, effortLimitPercent: null };
}

/** Checks one model's section; joint names must be the model's. */
export function parseCatalogSafety(model: RobotModel): CatalogSafety {
  const raw = model.safety;
  if (raw === undefined || raw === null) return { envelope: {}, effortLimitPercent: null };
  const where = `firmware-pins/catalog.json model "${model.id}" safety`;
  if (typeof raw !== "object" || Array.isArray(raw)) throw new Error(`${where} must be an object; got ${JSON.stringify(raw)}`);
  const section = raw as Record<string, unknown>;
  for (const key of Object.keys(section)) if (!KEYS.includes(key)) throw new Error(`${where}: unknown key "${key}"; known: ${KEYS.join(", ")}`);
  const joints = (record: unknown, key: string) => {
    if (typeof record !== "object" || record === null || Array.isArray(record)) throw new Error(`${where}.${key} must be an object keyed by joint name`);
    const unknown = Object.keys(record).filter((j) => !model.joints.includes(j));
    if (unknown.length) throw new Error(`${where}.${key} names joint(s) ${unknown.join(", ")}, which ${model.id} lacks`);
    return record as Record<string, unknown>;
  };
  const envelope: CatalogEnvelope = {};
  if (section.maxStepRad !== undefined) {
    const step = section.maxStepRad;
    const ok = (v: unknown) => typeof v === "number" && Number.isFinite(v) && v > 0;
    if (typeof step === "number") {
      if (!ok(step)) throw new Error(`${where}.maxStepRad must be a positive number; got ${step}`);
    } else {
      const record = joints(step, "maxStepRad");
      for (const [joint, v] of Object.entries(record)) if (!ok(v)) throw new Error(`${where}.maxStepRad.${joint} must be a positive number; got ${JSON.stringify(v)}`);
    }
    envelope.maxStepRad = step as number | Record<string, number>;
  }
  if (section.jointLimitsRad !== undefined) {
    const record = joints(section.jointLimitsRad, "jointLimitsRad");
    for (const [joint, range] of Object.entries(record)) {
      if (!Array.isArray(range) || range.length !== 2 || !range.every((v) => typeof v === "number" && Number.isFinite(v)) || range[0] >= range[1]) {
        throw new Error(`${where}.jointLimitsRad.${joint} must be [min, max] with min < max; got ${JSON.stringify(range)}`);
      }
    }
    envelope.jointLimitsRad = record as Record<string, [number, number]>;
  }
  if (section.workspaceBoxM !== undefined) envelope.workspaceBoxM = section.workspaceBoxM as WorkspaceBox | null;
  let effortLimitPercent: number | null = null;
  if (section.effortLimitPercent !== undefined && section.effortLimitPercent !== null) {
    const v = section.effortLimitPercent;
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0 || v > 100) throw new Error(`${where}.effortLimitPercent must be a number in (0, 100] or null; got ${JSON.stringify(v)}`);
    effortLimitPercent = v;
  }
  return { envelope, effortLimitPercent };
}
