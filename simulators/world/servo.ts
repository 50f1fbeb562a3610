/**
 * Servo-like joint motion: each joint moves toward its goal with a proportional velocity command,
 * capped by a maximum speed and an acceleration limit, the way a position-controlled hobby or
 * industrial servo tracks a step. Torque off lets the joints coast to a stop and ignores goals.
 * Also models the measured side of a joint: current rising with speed, acceleration and load, and a
 * slow thermal drift with the work done.
 */

export interface ServoLimits {
  maxSpeedRadS: number;
  maxAccelRadS2: number;
  /** Velocity command per radian of position error, 1/s. */
  gainPerS: number;
}

export const DEFAULT_SERVO_LIMITS: ServoLimits = { maxSpeedRadS: 2.5, maxAccelRadS2: 12, gainPerS: 12 };

const AMBIENT_C = 28;
/** Thermal time constant of a motor housing, s. */
const THERMAL_TAU_S = 600;

export class ServoJoints {
  readonly positionRad: number[];
  readonly velocityRadS: number[];
  readonly goalRad: number[];
  readonly currentA: number[];
  readonly temperatureC: number[];
  /** Extra load per joint (holding torque, contact) set by the world each step, amperes. */
  readonly loadA: number[];
  torqueEnabled = true;

  constructor(readonly dof: number, readonly limits: ServoLimits[], initialRad?: readonly number[]) {
    this.positionRad = Array.from({ length: dof }, (_, i) => initialRad?.[i] ?? 0);
    this.velocityRadS = new Array<number>(dof).fill(0);
    this.goalRad = [...this.positionRad];
    this.currentA = new Array<number>(dof).fill(0.1);
    this.temperatureC = new Array<number>(dof).fill(AMBIENT_C + 4);
    this.loadA = new Array<number>(dof).fill(0);
  }

  /** Sets every joint at rest at the given positions (scene reset). */
  place(positionRad: readonly number[]): void {
    for (let i = 0; i < this.dof; i++) {
      this.positionRad[i] = positionRad[i] ?? 0;
      this.goalRad[i] = this.positionRad[i];
      this.velocityRadS[i] = 0;
    }
  }

  /** Advances every joint by dtS. */
  step(dtS: number): void {
    for (let i = 0; i < this.dof; i++) {
      const { maxSpeedRadS, maxAccelRadS2, gainPerS } = this.limits[i];
      const wanted = this.torqueEnabled
        ? Math.max(-maxSpeedRadS, Math.min(maxSpeedRadS, gainPerS * (this.goalRad[i] - this.positionRad[i])))
        : 0;
      const dvMax = maxAccelRadS2 * dtS;
      const dv = Math.max(-dvMax, Math.min(dvMax, wanted - this.velocityRadS[i]));
      this.velocityRadS[i] += dv;
      this.positionRad[i] += this.velocityRadS[i] * dtS;
      const accelShare = Math.abs(dv) / dvMax;
      const current = this.torqueEnabled
        ? 0.12 + 0.25 * Math.abs(this.velocityRadS[i]) / maxSpeedRadS + 0.4 * accelShare + this.loadA[i]
        : 0.01;
      // Low-pass: a current sensor sees a smoothed signal.
      this.currentA[i] += (current - this.currentA[i]) * Math.min(1, dtS / 0.02);
      const heating = 0.12 * this.currentA[i] ** 2;
      this.temperatureC[i] += dtS * (heating - (this.temperatureC[i] - AMBIENT_C) / THERMAL_TAU_S);
    }
  }

  /** Stops the named joints where they are (a collision blocked them). */
  revert(joints: readonly number[], positionRad: readonly number[]): void {
    for (const i of joints) {
      this.positionRad[i] = positionRad[i];
      this.velocityRadS[i] = 0;
    }
  }
}
