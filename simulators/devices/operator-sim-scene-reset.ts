/**
 * The simulated cell's reset in operator mode: like a real cell, the arm homes and then the cell
 * waits for a person to set the scene (the agent reports `awaiting_reset`, the station shows the
 * scene); only the person's confirmation (the station's "Scene ready", the loopback POST /scene-ready,
 * or the simulated operator calling the same API) places the simulated objects. A person may set the
 * scene wrong: `misplaceNext()` (the simulated operator's error) shifts every object of the next
 * placement by MISPLACED_BY_M along x, well beyond any task's tolerance.
 */
import type { ResetPlan, SceneReset } from "../../cell-agent/hardware/types.js";
import type { SceneReadyGate } from "../../cell-agent/devices/scene/scene-ready-gate.js";
import { RESET_HOMING_S, RESET_SETTLE_S, type SimWorld } from "../world/sim-world.js";
import type { SimClock } from "./sim-clock.js";

/** How far a wrongly set object lands from its target, metres. */
export const MISPLACED_BY_M = 0.06;

export interface OperatorSimSceneResetOptions {
  gate: SceneReadyGate;
  /** Wall ms to wait for the person before the reset fails (default 600000, as a real cell's confirmTimeoutMs). */
  confirmTimeoutMs?: number;
  log?: (line: string) => void;
}

export class OperatorSimSceneReset implements SceneReset {
  private misplace = false;

  constructor(private readonly world: SimWorld, private readonly clock: SimClock, private readonly options: OperatorSimSceneResetOptions) {}

  /** The next placement puts every object MISPLACED_BY_M off its target (a person's mistake). */
  misplaceNext(): void {
    this.misplace = true;
  }

  async reset(plan: ResetPlan): Promise<{ resetS: number }> {
    const started = this.world.tNs;
    this.world.startHoming(plan.homeRad);
    await this.clock.sleepUntil(started + BigInt(RESET_HOMING_S * 1e9));
    await this.options.gate.wait(
      { since: new Date().toISOString(), lighting: plan.lighting, objects: plan.objects, distractors: plan.distractors },
      this.options.confirmTimeoutMs ?? 600_000,
    );
    const wrong = this.misplace;
    this.misplace = false;
    if (wrong) this.options.log?.(`simulated scene set wrong: every object ${MISPLACED_BY_M * 100} cm off its target along x`);
    this.world.placeScene(wrong ? misplaced(plan) : plan);
    await this.clock.sleepUntil(this.world.tNs + BigInt(RESET_SETTLE_S * 1e9));
    return { resetS: Number(this.world.tNs - started) / 1e9 };
  }
}

function misplaced(plan: ResetPlan): ResetPlan {
  const objects: ResetPlan["objects"] = {};
  for (const [name, o] of Object.entries(plan.objects)) {
    objects[name] = { ...o, positionM: [o.positionM[0] + MISPLACED_BY_M, o.positionM[1], o.positionM[2]] };
  }
  return { ...plan, objects };
}
