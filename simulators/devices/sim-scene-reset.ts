/**
 * The simulated reset routine: homes the arm over RESET_HOMING_S of simulated time (through the
 * clock, so it is paced like everything else), then places the objects exactly at the plan's
 * poses with tiny settle noise, sets the lighting, and lets RESET_SETTLE_S pass so that every device
 * (motion capture, joint states over the wire) has published the placed scene before the episode's
 * first reading.
 */
import type { ResetPlan, SceneReset } from "../../cell-agent/hardware/types.js";
import { RESET_HOMING_S, RESET_SETTLE_S, type SimWorld } from "../world/sim-world.js";
import type { SimClock } from "./sim-clock.js";

export class SimSceneReset implements SceneReset {
  constructor(private readonly world: SimWorld, private readonly clock: SimClock) {}

  async reset(plan: ResetPlan): Promise<{ resetS: number }> {
    const started = this.world.tNs;
    this.world.startHoming(plan.homeRad);
    await this.clock.sleepUntil(started + BigInt(RESET_HOMING_S * 1e9));
    this.world.placeScene(plan);
    await this.clock.sleepUntil(this.world.tNs + BigInt(RESET_SETTLE_S * 1e9));
    return { resetS: Number(this.world.tNs - started) / 1e9 };
  }
}
