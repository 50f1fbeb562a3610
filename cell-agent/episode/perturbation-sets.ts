/**
 * The versioned perturbation table `assay-perturb@1`. A set's contents never change once published:
 * a change is a new set version (e.g. "color-blocks@2") or a new table revision, so an old
 * episode's replay spec keeps meaning the same thing.
 */
export const PERTURBATION_REV = "assay-perturb@1";

export interface DistractorSet {
  /** Objects the set draws from (each at most once per episode). */
  objects: readonly string[];
  minCount: number;
  maxCount: number;
}

export const DISTRACTOR_SETS: Readonly<Record<string, DistractorSet>> = {
  none: { objects: [], minCount: 0, maxCount: 0 },
  "color-blocks@1": { objects: ["block-blue", "block-green", "block-yellow"], minCount: 2, maxCount: 3 },
  "office-clutter@1": { objects: ["mug", "stapler", "tape"], minCount: 1, maxCount: 3 },
};

/** Height of each distractor's centre above the table when resting, metres. */
export const DISTRACTOR_REST_Z_M: Readonly<Record<string, number>> = {
  "block-blue": 0.015,
  "block-green": 0.015,
  "block-yellow": 0.015,
  mug: 0.045,
  stapler: 0.02,
  tape: 0.012,
};

/** Lighting presets when a run names none. */
export const DEFAULT_LIGHTING: readonly string[] = ["nominal"];

/** Distractors stay at least this far (centre to centre, in the table plane) from task objects. */
export const DISTRACTOR_CLEARANCE_M = 0.06;

/** Distractors are placed within this distance of the task objects' nominal centroid. */
export const DISTRACTOR_PLACEMENT_RADIUS_M = 0.15;

/** Throws with the known names when a set is not in the table. */
export function distractorSet(name: string): DistractorSet {
  const set = DISTRACTOR_SETS[name];
  if (!set) {
    throw new Error(`distractor set "${name}" is not in ${PERTURBATION_REV}; known sets: ${Object.keys(DISTRACTOR_SETS).join(", ")}`);
  }
  return set;
}
