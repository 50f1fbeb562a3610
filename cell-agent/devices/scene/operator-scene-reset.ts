/**
 * The real cell's `SceneReset`: the robot homes itself (torque on, a straight joint-space move to the
 * plan's home pose over `homingMs`), then a technician sets the scene by hand and confirms with
 * `POST /scene-ready` on the agent's loopback port (e.g. `curl -X POST http://127.0.0.1:9464/scene-ready`) or
 * with "Scene ready" on the console's operator station (relayed to the agent over its link).
 * No confirmation within `confirmTimeoutMs` fails the reset, and the episode is interrupted.
 */
import type { Clock, EstopInput, MotorBus, ResetPlan, SceneReset } from "../../hardware/types.js";
import type { SceneReadyGate } from "./scene-ready-gate.js";

export interface OperatorSceneResetOptions {
  motors: MotorBus;
  clock: Clock;
  estop: EstopInput;
  gate: SceneReadyGate;
  homingMs: number;
  confirmTimeoutMs: number;
  log: (line: string) => void;
}

const HOMING_STEP_MS = 20;

export class OperatorSceneReset implements SceneReset {
  constructor(private readonly options: OperatorSceneResetOptions) {}

  async reset(plan: ResetPlan): Promise<{ resetS: number }> {
    const { motors, clock, estop, gate, log } = this.options;
    const startedNs = clock.nowNs();
    const estopped = () => (estop.isPressed() ? "the e-stop was pressed during the scene reset" : null);
    if (plan.homeRad.length === motors.jointNames.length) {
      await this.home(plan.homeRad, estopped);
    }
    const objects = Object.entries(plan.objects)
      .map(([name, o]) => `${name} (${o.object}) at x ${(o.positionM[0] * 1000).toFixed(0)} mm, y ${(o.positionM[1] * 1000).toFixed(0)} mm, yaw ${((o.yawRad * 180) / Math.PI).toFixed(0)}°`)
      .join("; ");
    log(`scene reset: place ${objects || "no objects"}${plan.distractors.length ? ` and ${plan.distractors.length} distractor(s)` : ""}, lighting "${plan.lighting}"; then confirm with POST /scene-ready on the agent's local port`);
    await gate.wait(
      { since: new Date().toISOString(), lighting: plan.lighting, objects: plan.objects, distractors: plan.distractors },
      this.options.confirmTimeoutMs,
      estopped,
    );
    log("scene reset confirmed by the technician");
    return { resetS: Number(clock.nowNs() - startedNs) / 1e9 };
  }

  /** A straight joint-space move from where the arm is to `homeRad`, in 20 ms steps. */
  private async home(homeRad: number[], estopped: () => string | null): Promise<void> {
    const { motors, clock, homingMs } = this.options;
    const from = (await motors.readState()).positionRad;
    await motors.setTorque(true);
    const steps = Math.max(1, Math.ceil(homingMs / HOMING_STEP_MS));
    const startNs = clock.nowNs();
    for (let step = 1; step <= steps; step++) {
      const reason = estopped();
      if (reason) throw new Error(reason);
      const f = step / steps;
      await motors.writeGoalPositions(from.map((p, i) => p + (homeRad[i] - p) * f));
      await clock.sleepUntil(startNs + BigInt(step * HOMING_STEP_MS) * 1_000_000n);
    }
  }
}
