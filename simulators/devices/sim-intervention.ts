/**
 * The simulated technician's nudge (Intervention): re-homes the arm over RESET_HOMING_S of
 * simulated time (through the clock, paced like everything else; anything held is let go), then,
 * when a task object lies more than NUDGE_BEYOND_M from its planned pose (knocked away, dropped
 * off to the side), puts the scene back at the plan's poses, the way a technician would slide the
 * cube back into the reachable area. `detail` says which of the two happened and how far off the
 * objects were. Putting the scene back ends with RESET_SETTLE_S of simulated time, as a reset does.
 */
import type { Intervention, InterventionKind, ResetPlan } from "../../cell-agent/hardware/types.js";
import { RESET_HOMING_S, RESET_SETTLE_S, type SimWorld } from "../world/sim-world.js";
import type { SimClock } from "./sim-clock.js";

/** A task object farther than this from its planned position on the table (metres, x-y) is put back. */
export const NUDGE_BEYOND_M = 0.01;

export class SimIntervention implements Intervention {
  constructor(private readonly world: SimWorld, private readonly clock: SimClock) {}

  async intervene(kind: InterventionKind, plan: ResetPlan): Promise<{ durationS: number; detail: string }> {
    const started = this.world.tNs;
    this.world.startHoming(plan.homeRad);
    await this.clock.sleepUntil(started + BigInt(RESET_HOMING_S * 1e9));
    const displaced = Object.entries(plan.objects).flatMap(([name, planned]) => {
      const object = this.world.object(name);
      if (!object) return [];
      const offM = Math.hypot(object.positionM[0] - planned.positionM[0], object.positionM[1] - planned.positionM[1]);
      return offM > NUDGE_BEYOND_M ? [`${name} ${(offM * 1000).toFixed(0)} mm off`] : [];
    });
    if (displaced.length > 0) {
      this.world.placeScene(plan);
      // As after a reset: the devices publish the scene put back before the episode reads again.
      await this.clock.sleepUntil(this.world.tNs + BigInt(RESET_SETTLE_S * 1e9));
    }
    const what = displaced.length > 0 ? `re-homed the arm and put the scene back at its planned poses (${displaced.join(", ")})` : "re-homed the arm; the task objects were where planned";
    return { durationS: Number(this.world.tNs - started) / 1e9, detail: what };
  }
}

