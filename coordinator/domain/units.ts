/**
 * Units: the cells of an experiment. A run of any kind other than `run` has one or more units, each
 * one robot pin x environment x policy x task (an eval adds the suite's tasks, a compare its policy
 * names). Every episode belongs to one unit (`episodes.unit`, an index into `runs.units`); the
 * scheduler matches a pending episode to a cell by its unit's model, firmware and environment, and
 * sends the unit's policy and task. Kind `run` has one unit, made from its plan when it is read
 * (its rows store none, and its episodes' `unit` is null: unit 0).
 */

/** One unit as stored in runs.units (snake_case, the way results show it). */
export interface RunUnit {
  /** Stable label, unique in the run: e.g. `so101@3.11/tabletop@1`, `policy:a`, `target`. */
  key: string;
  /** Resolved robot pin `<model>@<firmware>`. */
  robot: string;
  model: string;
  firmware: string;
  /** `<name>@<version>`. */
  environment: string;
  /** Frozen task revision `<name>@v<N>`. */
  task: string;
  policy: Record<string, unknown>;
  /** Compare: the policy's name in `policies`. */
  policy_name?: string;
  /** Perturbation schedule of the unit (eval: the suite's); default the run's `perturbation`. */
  perturbation?: Record<string, unknown>;
  /** What the unit is for, when a kind has several roles (transfer: source/target; threshold: soak/verify). */
  role?: string;
}

/** `episodes.assign`: what an assignment carries besides the seed (parsed in the store, EpisodeRecord.assign). */
export interface EpisodeAssign {
  /** A replay spec the cell reproduces exactly instead of drawing from the seed (verify). */
  replay_spec?: Record<string, unknown>;
  /** Compare: pair index; both episodes of a pair share the seed. */
  pair?: number;
  /** Compare: position within the pair (0 runs first). */
  order?: number;
  /**
   * Paired compare: "cell" when both episodes of the pair must run on the same cell (blocking by cell:
   * the scheduler sends the second to the cell that took the first); absent on runs planned before.
   */
  block?: "cell";
  /** Verify: "scenario" or "audit"; the scenario's index and simulated outcome. */
  role?: string;
  scenario?: number;
  sim_outcome?: "success" | "failure" | null;
  /** Threshold: "soak" (iteration) or "verify" (confirmation). */
  phase?: string;
}

/** The unit index of an episode (kind `run` stores none: unit 0). */
export function unitOf(episode: { unit?: number | null }): number {
  return episode.unit ?? 0;
}
