/**
 * One emulated servo's physics: a goal tracked under speed and acceleration limits (a trapezoidal
 * profile), current from acceleration and speed, and a winding that warms with current and cools
 * towards ambient. Integrated in fixed 1 ms steps so results do not depend on how often it is asked.
 */

export interface MotionLimits {
  /** ticks/s */
  maxSpeed: number;
  /** ticks/s² */
  maxAccel: number;
  ticksPerRad: number;
  stallCurrentA: number;
}

const STEP_S = 0.001;
const IDLE_CURRENT_A = 0.05;
/** A per rad/s² of acceleration and per rad/s of speed. */
const ACCEL_CURRENT_A = 0.01;
const SPEED_CURRENT_A = 0.04;
/** °C/s per A², and 1/s towards ambient. */
const HEATING = 1.5;
const COOLING = 0.01;

export class MotionModel {
  positionTicks: number;
  velocityTicksS = 0;
  goalTicks: number;
  currentA = 0;
  temperatureC: number;
  torqueOn = false;

  constructor(initialTicks: number, private readonly ambientC: number) {
    this.positionTicks = initialTicks;
    this.goalTicks = initialTicks;
    this.temperatureC = ambientC;
  }

  /** Advances by `dtS` seconds. */
  advance(dtS: number, limits: MotionLimits): void {
    let remaining = dtS;
    while (remaining > 1e-9) {
      const dt = Math.min(STEP_S, remaining);
      remaining -= dt;
      this.step(dt, limits);
      // At rest on the goal nothing changes but temperature: finish that analytically.
      if (this.velocityTicksS === 0 && (this.positionTicks === this.goalTicks || !this.torqueOn) && remaining > STEP_S) {
        this.currentA = this.torqueOn ? IDLE_CURRENT_A : 0;
        this.heat(remaining);
        remaining = 0;
      }
    }
  }

  /** Stops where it is (bus watchdog): goal becomes the present position. */
  stop(): void {
    this.velocityTicksS = 0;
    this.goalTicks = Math.round(this.positionTicks);
  }

  private step(dt: number, limits: MotionLimits): void {
    if (!this.torqueOn) {
      this.velocityTicksS = 0;
      this.currentA = 0;
      this.heat(dt);
      return;
    }
    const error = this.goalTicks - this.positionTicks;
    const accelStep = limits.maxAccel * dt;
    const wanted = Math.sign(error) * Math.min(limits.maxSpeed, Math.sqrt(2 * limits.maxAccel * Math.abs(error)));
    const dv = Math.max(-accelStep, Math.min(accelStep, wanted - this.velocityTicksS));
    this.velocityTicksS += dv;
    this.positionTicks += this.velocityTicksS * dt;
    const overshot = Math.sign(this.goalTicks - this.positionTicks) !== Math.sign(error) && error !== 0;
    if ((Math.abs(this.goalTicks - this.positionTicks) < 0.5 && Math.abs(this.velocityTicksS) <= accelStep) || overshot) {
      this.positionTicks = this.goalTicks;
      this.velocityTicksS = 0;
    }
    const accelRad = Math.abs(dv / dt) / limits.ticksPerRad;
    const speedRad = Math.abs(this.velocityTicksS) / limits.ticksPerRad;
    const magnitude = Math.min(limits.stallCurrentA, IDLE_CURRENT_A + ACCEL_CURRENT_A * accelRad + SPEED_CURRENT_A * speedRad);
    this.currentA = (dv !== 0 ? Math.sign(dv) : Math.sign(this.velocityTicksS) || 1) * magnitude;
    this.heat(dt);
  }

  private heat(dt: number): void {
    const rise = HEATING * this.currentA * this.currentA;
    this.temperatureC += (rise - COOLING * (this.temperatureC - this.ambientC)) * dt;
  }
}
