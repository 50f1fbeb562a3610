/**
 * The safety envelope: every joint target a policy sends passes through it on its way to the motor
 * bus, whatever the bus (serial servos, a ROS robot, a simulation). It is applied in one place, the
 * episode runner, just before `MotorBus.writeGoalPositions`. Pure once compiled: no I/O, no clock (the
 * options' per-model defaults come from the robot catalogue, catalog-safety.ts, read once).
 *
 * Per step, in this order:
 *  1. joint limits (`jointLimitsRad`, optional per joint): the target is clamped into [min, max];
 *  2. change per step (`maxStepRad`, per joint): the target moves at most this far from the previous
 *     commanded goal (the measured position on the first step and after a hold). LeRobot's
 *     `max_relative_target` is the model; LeRobot measures from the present position, Assay from the
 *     previous goal, so a gripper that closes on an object (its goal beyond the contact) is not
 *     clamped every step, while a goal still never jumps;
 *  3. workspace box (`workspaceBoxM`, models with kinematics only, arm-kinematics.ts): when the
 *     fingertip of the target lies outside the box, the step is shortened (bisection along the
 *     step) to the furthest point inside it; an arm already outside may only move back towards it.
 *
 * Every clamp is reported. A step with at least one clamp is a clamped step; the stop rule ends the
 * episode (failure cluster `safety_limit`) after `consecutiveClampLimit` clamped steps in a row or
 * `windowClampLimit` clamped steps among the last `windowSteps`.
 */
import { ARM_CHAINS, forwardKinematicsFor, type ForwardKinematics } from "./arm-kinematics.js";
import { catalogSafety, type CatalogEnvelope, type WorkspaceBox } from "./catalog-safety.js";

export type { WorkspaceBox };

export type ClampKind = "joint_limit" | "max_step" | "workspace";

export interface Clamp {
  kind: ClampKind;
  /** The joint clamped; absent for the workspace box (the whole arm's step is shortened). */
  joint?: string;
  /** Joint clamps: the target and the goal sent, rad. Workspace: the fingertip's distance outside the box, m, requested and sent. */
  requested: number;
  applied: number;
}

/**
 * The agent config's `safety.envelope` section (all optional). Defaults are the robot catalogue's for
 * the model (firmware-pins/catalog.json, `safety`), else the built-in ENVELOPE_DEFAULTS.
 */
export interface SafetyEnvelopeOptionsInput {
  /** Largest change of a goal per control step, radians (metres for prismatic joints): one number or per joint name (joints not named keep the catalogue's). Default: the catalogue's, else 0.5. */
  maxStepRad?: number | Record<string, number>;
  /** [min, max] per joint name, replacing the catalogue's for the joints named; joints in neither are unbounded here (serial buses clamp to their calibrated range anyway). */
  jointLimitsRad?: Record<string, [number, number]>;
  /** The fingertip's box in the robot base frame; `null` turns the catalogue's off (so101 has one). */
  workspaceBoxM?: WorkspaceBox | null;
  /** Clamped control steps in a row that stop the episode (default 10). */
  consecutiveClampLimit?: number;
  /** Clamped control steps among the last `windowSteps` that stop the episode (default 30). */
  windowClampLimit?: number;
  /** Length of the stop rule's window, control steps (default 100). */
  windowSteps?: number;
}

export interface SafetyEnvelopeOptions {
  jointNames: readonly string[];
  maxStepRad: number[];
  /** Per joint, [min, max] (±Infinity when unbounded). */
  jointLimitsRad: Array<[number, number]>;
  workspaceBoxM: WorkspaceBox | null;
  forwardKinematics: ForwardKinematics | null;
  consecutiveClampLimit: number;
  windowClampLimit: number;
  windowSteps: number;
}

export const ENVELOPE_DEFAULTS = { maxStepRad: 0.5, consecutiveClampLimit: 10, windowClampLimit: 30, windowSteps: 100 } as const;

const KEYS = ["maxStepRad", "jointLimitsRad", "workspaceBoxM", "consecutiveClampLimit", "windowClampLimit", "windowSteps"];

function positiveNumber(name: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) throw new RangeError(`safety envelope ${name} must be a positive number; got ${JSON.stringify(value)}`);
  return value;
}

function positiveInteger(name: string, value: unknown): number {
  if (!Number.isInteger(value) || (value as number) < 1) throw new RangeError(`safety envelope ${name} must be a positive integer; got ${JSON.stringify(value)}`);
  return value as number;
}

function knownJoints(name: string, record: Record<string, unknown>, jointNames: readonly string[]): void {
  const unknown = Object.keys(record).filter((joint) => !jointNames.includes(joint));
  if (unknown.length) throw new RangeError(`safety envelope ${name} names joint(s) ${unknown.map((j) => JSON.stringify(j)).join(", ")}, which this robot lacks; its joints: ${jointNames.join(", ")}`);
}

function point(name: string, value: unknown): [number, number, number] {
  if (!Array.isArray(value) || value.length !== 3 || !value.every((v) => typeof v === "number" && Number.isFinite(v))) {
    throw new RangeError(`safety envelope ${name} must be [x, y, z] in metres; got ${JSON.stringify(value)}`);
  }
  return [value[0], value[1], value[2]];
}

/**
 * `robot.catalog`: the model's defaults (default: the robot catalogue's `safety` section for `robot.model`);
 * the input overrides them key by key, and per joint for `maxStepRad` and `jointLimitsRad`.
 */
export function compileSafetyEnvelopeOptions(input: SafetyEnvelopeOptionsInput, robot: { model: string; jointNames: readonly string[]; catalog?: CatalogEnvelope }): SafetyEnvelopeOptions {
  for (const key of Object.keys(input)) if (!KEYS.includes(key)) throw new RangeError(`unknown safety envelope option "${key}"; known: ${KEYS.join(", ")}`);
  const { jointNames } = robot;
  const catalog = robot.catalog ?? catalogSafety(robot.model).envelope;
  const perJoint = (value: number | Record<string, number> | undefined, joint: string) => (typeof value === "number" ? value : value?.[joint]);
  const step = input.maxStepRad;
  if (step !== undefined && typeof step !== "number") knownJoints("maxStepRad", step, jointNames);
  const maxStepRad = jointNames.map((joint) =>
    positiveNumber(typeof step === "number" ? "maxStepRad" : `maxStepRad.${joint}`, perJoint(step, joint) ?? perJoint(catalog.maxStepRad, joint) ?? ENVELOPE_DEFAULTS.maxStepRad),
  );
  const given = input.jointLimitsRad ?? {};
  knownJoints("jointLimitsRad", given, jointNames);
  const limits: Record<string, [number, number]> = { ...(catalog.jointLimitsRad ?? {}), ...given };
  const jointLimitsRad = jointNames.map((joint): [number, number] => {
    const range = limits[joint];
    if (range === undefined) return [-Infinity, Infinity];
    if (!Array.isArray(range) || range.length !== 2 || !range.every(Number.isFinite) || range[0] > range[1]) {
      throw new RangeError(`safety envelope jointLimitsRad.${joint} must be [min, max] with min <= max; got ${JSON.stringify(range)}`);
    }
    return [range[0], range[1]];
  });
  const forwardKinematics = forwardKinematicsFor(robot.model, jointNames) ?? null;
  let workspaceBoxM: WorkspaceBox | null = null;
  const box = input.workspaceBoxM === undefined ? catalog.workspaceBoxM ?? null : input.workspaceBoxM;
  if (box !== null) {
    if (!forwardKinematics) throw new RangeError(`safety envelope workspaceBoxM needs the robot's kinematics, which Assay knows only for ${Object.keys(ARM_CHAINS).join(", ")}; remove it for "${robot.model}"`);
    const minM = point("workspaceBoxM.minM", box.minM);
    const maxM = point("workspaceBoxM.maxM", box.maxM);
    if (minM.some((v, i) => v >= maxM[i])) throw new RangeError(`safety envelope workspaceBoxM.minM must be below maxM on every axis; got ${JSON.stringify(box)}`);
    workspaceBoxM = { minM, maxM };
  }
  const windowSteps = positiveInteger("windowSteps", input.windowSteps ?? ENVELOPE_DEFAULTS.windowSteps);
  const windowClampLimit = positiveInteger("windowClampLimit", input.windowClampLimit ?? ENVELOPE_DEFAULTS.windowClampLimit);
  if (windowClampLimit > windowSteps) throw new RangeError(`safety envelope windowClampLimit (${windowClampLimit}) cannot exceed windowSteps (${windowSteps})`);
  return {
    jointNames: [...jointNames], maxStepRad, jointLimitsRad, workspaceBoxM, forwardKinematics: workspaceBoxM ? forwardKinematics : null,
    consecutiveClampLimit: positiveInteger("consecutiveClampLimit", input.consecutiveClampLimit ?? ENVELOPE_DEFAULTS.consecutiveClampLimit),
    windowClampLimit, windowSteps,
  };
}

export interface EnvelopeStep {
  /** What goes to the bus. */
  commandRad: number[];
  clamps: Clamp[];
  /** Set when the stop rule fired this step: why, in words. */
  stop?: string;
}

/** Distance of a point outside the box, summed over axes (0 inside). */
function outside(box: WorkspaceBox, p: readonly number[]): number {
  let d = 0;
  for (let i = 0; i < 3; i++) d += Math.max(0, box.minM[i] - p[i]) + Math.max(0, p[i] - box.maxM[i]);
  return d;
}

/** One per episode: it remembers the previous goal and the recent clamped steps. */
export class SafetyEnvelope {
  private previousRad: number[] | undefined;
  private consecutive = 0;
  private readonly window: boolean[] = [];
  private clampedInWindow = 0;
  /** Clamps so far (every kind, every joint). */
  clampCount = 0;

  constructor(readonly options: SafetyEnvelopeOptions) {}

  /** The arm was held at `positionRad` (goal = measured): the next step is measured from there. */
  held(positionRad: readonly number[]): void {
    this.previousRad = [...positionRad];
  }

  /** The arm moved under someone else's hand (an intervention): the next step is measured from its reading. */
  restart(): void {
    this.previousRad = undefined;
  }

  /**
   * Whether a step can be limited: it needs a reference, the previous goal or this step's reading. Without one (the
   * first step, or the first after restart(), with a failed joint read) the change per step and the workspace box
   * cannot be applied, so the caller must send nothing that step.
   */
  canLimit(measuredRad?: readonly number[]): boolean {
    return this.previousRad !== undefined || measuredRad !== undefined;
  }

  /** `targetRad`: the policy's targets; `measuredRad`: this step's reading (the reference when no goal was sent yet). */
  step(targetRad: readonly number[], measuredRad?: readonly number[]): EnvelopeStep {
    const o = this.options;
    const reference = this.previousRad ?? (measuredRad ? [...measuredRad] : undefined);
    const clamps: Clamp[] = [];
    const command = targetRad.map((requested, i) => {
      const [min, max] = o.jointLimitsRad[i];
      let value = Math.min(max, Math.max(min, requested));
      if (value !== requested) clamps.push({ kind: "joint_limit", joint: o.jointNames[i], requested, applied: value });
      if (reference) {
        const limited = Math.min(reference[i] + o.maxStepRad[i], Math.max(reference[i] - o.maxStepRad[i], value));
        if (limited !== value) clamps.push({ kind: "max_step", joint: o.jointNames[i], requested: value, applied: limited });
        value = limited;
      }
      return value;
    });
    let commandRad = command;
    if (o.workspaceBoxM && o.forwardKinematics && reference) {
      const box = o.workspaceBoxM;
      const fk = o.forwardKinematics;
      const allowed = outside(box, fk(reference));
      const at = (t: number) => command.map((v, i) => reference[i] + t * (v - reference[i]));
      const excess = outside(box, fk(command));
      if (excess > 0 && excess > allowed + 1e-9) {
        let lo = 0;
        let hi = 1;
        for (let k = 0; k < 20; k++) {
          const mid = (lo + hi) / 2;
          if (outside(box, fk(at(mid))) <= allowed + 1e-9) lo = mid;
          else hi = mid;
        }
        commandRad = at(lo);
        clamps.push({ kind: "workspace", requested: excess, applied: outside(box, fk(commandRad)) });
      }
    }
    this.previousRad = commandRad;
    this.clampCount += clamps.length;
    const clamped = clamps.length > 0;
    this.consecutive = clamped ? this.consecutive + 1 : 0;
    this.window.push(clamped);
    if (clamped) this.clampedInWindow++;
    if (this.window.length > o.windowSteps && this.window.shift()) this.clampedInWindow--;
    let stop: string | undefined;
    if (this.consecutive >= o.consecutiveClampLimit) {
      stop = `the policy's targets were clamped by the safety envelope ${this.consecutive} control steps in a row (limit ${o.consecutiveClampLimit}); the episode is stopped`;
    } else if (this.clampedInWindow >= o.windowClampLimit) {
      stop = `the policy's targets were clamped by the safety envelope in ${this.clampedInWindow} of the last ${this.window.length} control steps (limit ${o.windowClampLimit} of ${o.windowSteps}); the episode is stopped`;
    }
    return { commandRad, clamps, ...(stop ? { stop } : {}) };
  }
}

/** The `/events` detail of a clamped step: JSON of the clamps, bounded. */
export function clampEventDetail(clamps: readonly Clamp[]): string {
  const round = (v: number) => Number(v.toFixed(4));
  return JSON.stringify(clamps.slice(0, 8).map((c) => ({ kind: c.kind, ...(c.joint ? { joint: c.joint } : {}), requested: round(c.requested), applied: round(c.applied) })));
}
