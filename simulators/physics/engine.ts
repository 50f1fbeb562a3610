/**
 * Which physics engine a SimWorld runs on. "mujoco": MuJoCo 3.3.8 (mujoco-js WebAssembly), rigid
 * bodies with contacts and friction; "kinematic": the hand-written servo/grasp-rule world. The
 * default is the engine chosen by measurement (docs/simulation.md, scripts/bench/physics.ts).
 */

export type SimEngine = "mujoco" | "kinematic";

export const SIM_ENGINES: readonly SimEngine[] = ["mujoco", "kinematic"];

/** The engine a SimWorld uses when its options name none. */
export const DEFAULT_SIM_ENGINE: SimEngine = "mujoco";

/**
 * Parses an engine name from configuration (e.g. ASSAY_SIM_ENGINE, read only in scripts/start.ts);
 * empty or undefined gives the default.
 */
export function parseSimEngine(value: string | undefined): SimEngine {
  if (value === undefined || value === "") return DEFAULT_SIM_ENGINE;
  if ((SIM_ENGINES as readonly string[]).includes(value)) return value as SimEngine;
  throw new Error(`simulation engine must be one of ${SIM_ENGINES.join(", ")}; got "${value}"`);
}
