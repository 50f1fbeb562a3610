/**
 * Gripper and grasp physics. Two fingers, modelled as vertical rods of radius 5 mm, sit on the
 * closing axis (the tool yaw) at +/- (8 mm + 19 mm x opening) from the fingertip point: the jaw opens 44 mm between the rods' inner edges.
 *
 * - When the closing fingers both reach the cube, the cube attaches only if the fingertip point is
 *   within 12 mm (horizontal) and 15 mm (vertical) of its centre and the closing axis is within
 *   20 degrees of a cube face (mod 90); otherwise the cube squirts out sideways.
 * - A single finger inside a footprint below the object's top pushes the object out of its way
 *   (a knock), with a contact-force spike. Distractors are knocked the same way.
 * - A finger coming down onto an object's top lands on it: the arm stops there (landingOn).
 * - A held cube follows the fingertip and slips out when the fingertip moves too fast or too
 *   jerkily for the grip (a better-centred, better-aligned grip tolerates more), or when the
 *   gripper opens. A released cube falls to the table.
 */
import { squareYawError, type ToolPose } from "./kinematics.js";
import { insideFootprint, pushOutVector, topOf, type SimObject } from "./objects.js";

export const FINGER_BASE_OFFSET_M = 0.008;
export const FINGER_SPAN_PER_OPENING_M = 0.019;
export const FINGER_RADIUS_M = 0.005;
export const GRASP_XY_TOLERANCE_M = 0.012;
export const GRASP_Z_TOLERANCE_M = 0.015;
export const GRASP_YAW_TOLERANCE_RAD = (20 * Math.PI) / 180;

/** The gripper opening at which the fingers touch a box of the given half width. */
export function contactOpening(halfWidthM: number): number {
  return (halfWidthM + FINGER_RADIUS_M - FINGER_BASE_OFFSET_M) / FINGER_SPAN_PER_OPENING_M;
}

/** World xy of both finger rods. */
export function fingerPoints(tool: ToolPose, opening: number): [[number, number], [number, number]] {
  const offset = FINGER_BASE_OFFSET_M + FINGER_SPAN_PER_OPENING_M * opening;
  const c = Math.cos(tool.yawRad) * offset;
  const s = Math.sin(tool.yawRad) * offset;
  const [x, y] = tool.positionM;
  return [[x + c, y + s], [x - c, y - s]];
}

export interface GraspStep {
  tool: ToolPose;
  previousTool: ToolPose;
  opening: number;
  previousOpening: number;
  /** Filtered fingertip speed, m/s, and acceleration magnitude, m/s^2. */
  speedMS: number;
  accelMS2: number;
  objects: SimObject[];
}

export interface GraspEvents {
  /** Contact force impulses this step, world frame, newtons. */
  forceN: [number, number, number];
  /** Names of objects knocked this step. */
  knocked: string[];
  attached?: string;
  released?: "opened" | "slipped";
}

export class GraspPhysics {
  held: SimObject | null = null;
  /** 0.2..1: how well centred and aligned the current grip is. */
  quality = 0;
  /** False after a slip until the fingers open again: closed fingers cannot re-grip. */
  private armed = true;
  private offsetToolFrame: [number, number, number] = [0, 0, 0];
  private yawOffsetRad = 0;

  /** The opening below which the fingers cannot close while holding (they rest on the cube). */
  holdingOpening(): number | null {
    return this.held ? contactOpening(Math.min(this.held.shape.halfXM, this.held.shape.halfYM)) : null;
  }

  /** The lowest fingertip z that keeps a held object above the table (0 when empty-handed). */
  minToolZ(): number {
    // A few millimetres of give: pressing a held cube onto the table squeezes it in the fingers.
    return this.held ? this.held.shape.heightM / 2 - this.offsetToolFrame[2] - 0.004 : 0;
  }

  /** Drops whatever is held without physics (scene reset). */
  clear(): void {
    if (this.held) this.held.attached = false;
    this.held = null;
  }

  /**
   * The object a finger would land on from above in this step (previously at or above its top,
   * now below it, inside its footprint), or null. The arm cannot push through: the world stops it.
   */
  landingOn(step: Pick<GraspStep, "tool" | "previousTool" | "opening" | "objects">): SimObject | null {
    const fingers = fingerPoints(step.tool, step.opening);
    for (const object of step.objects) {
      if (object.attached || object.fallSpeedMS > 0) continue;
      const top = topOf(object);
      if (step.previousTool.positionM[2] < top - 0.0005 || step.tool.positionM[2] >= top) continue;
      if (fingers.some(([x, y]) => insideFootprint(object, x, y, FINGER_RADIUS_M))) return object;
    }
    return null;
  }

  update(step: GraspStep): GraspEvents {
    const events: GraspEvents = { forceN: [0, 0, 0], knocked: [] };
    if (this.held) {
      this.updateHeld(step, events);
      return events;
    }
    if (step.opening > 0.6) this.armed = true;
    const fingers = fingerPoints(step.tool, step.opening);
    const toolZ = step.tool.positionM[2];
    for (const object of step.objects) {
      // A falling object drops past the fingers before they can act on it.
      if (object.attached || object.fallSpeedMS > 0 || toolZ >= topOf(object)) continue;
      const inside = fingers.map(([x, y]) => insideFootprint(object, x, y, FINGER_RADIUS_M));
      if (inside[0] && inside[1]) {
        const closing = step.opening < step.previousOpening - 1e-6 && step.previousTool.positionM[2] < topOf(object);
        if (object.kind === "cube" && closing && this.armed && this.tryAttach(object, step.tool)) {
          events.attached = object.name;
          return events;
        }
        this.squirt(object, step.tool, events);
        continue;
      }
      for (let k = 0; k < 2; k++) {
        if (!inside[k]) continue;
        const push = pushOutVector(object, fingers[k][0], fingers[k][1], FINGER_RADIUS_M);
        if (!push) continue;
        object.positionM[0] += push[0];
        object.positionM[1] += push[1];
        const impulse = 4 + 400 * Math.hypot(push[0], push[1]);
        const norm = Math.hypot(push[0], push[1]) || 1;
        events.forceN[0] -= (impulse * push[0]) / norm;
        events.forceN[1] -= (impulse * push[1]) / norm;
        events.knocked.push(object.name);
      }
    }
    return events;
  }

  private tryAttach(cube: SimObject, tool: ToolPose): boolean {
    const dx = cube.positionM[0] - tool.positionM[0];
    const dy = cube.positionM[1] - tool.positionM[1];
    const dz = cube.positionM[2] - tool.positionM[2];
    const xyErr = Math.hypot(dx, dy);
    const yawErr = squareYawError(tool.yawRad, cube.yawRad);
    if (xyErr > GRASP_XY_TOLERANCE_M || Math.abs(dz) > GRASP_Z_TOLERANCE_M || yawErr > GRASP_YAW_TOLERANCE_RAD) return false;
    this.held = cube;
    cube.attached = true;
    cube.fallSpeedMS = 0;
    this.quality = Math.max(0.2, 1 - 0.4 * (xyErr / GRASP_XY_TOLERANCE_M) - 0.4 * (yawErr / GRASP_YAW_TOLERANCE_RAD));
    const c = Math.cos(tool.yawRad);
    const s = Math.sin(tool.yawRad);
    // The closing fingers centre the cube along their axis; the across-axis offset stays.
    const across = -s * dx + c * dy;
    this.offsetToolFrame = [0, across, dz];
    // Squeezing also squares the cube up with the fingers.
    const quarter = Math.PI / 2;
    this.yawOffsetRad = Math.round((cube.yawRad - tool.yawRad) / quarter) * quarter;
    this.follow(tool);
    return true;
  }

  /** A misaligned or off-centre squeeze shoots the cube out sideways, across the closing axis. */
  private squirt(object: SimObject, tool: ToolPose, events: GraspEvents): void {
    const nx = -Math.sin(tool.yawRad);
    const ny = Math.cos(tool.yawRad);
    const across = (object.positionM[0] - tool.positionM[0]) * nx + (object.positionM[1] - tool.positionM[1]) * ny;
    const side = across >= 0 ? 1 : -1;
    const clear = Math.hypot(object.shape.halfXM, object.shape.halfYM) + FINGER_RADIUS_M + 0.003;
    const move = side * clear - across;
    object.positionM[0] += nx * move;
    object.positionM[1] += ny * move;
    object.yawRad += side * 0.15;
    events.forceN[0] -= nx * side * 8;
    events.forceN[1] -= ny * side * 8;
    events.knocked.push(object.name);
  }

  private updateHeld(step: GraspStep, events: GraspEvents): void {
    const cube = this.held!;
    const open = contactOpening(Math.min(cube.shape.halfXM, cube.shape.halfYM));
    let reason: GraspEvents["released"];
    if (step.opening > open + 0.04) reason = "opened";
    // Friction holds ~20 g against gravity plus this much acceleration; a poor grip holds less.
    else if (step.speedMS > 0.3 + 0.4 * this.quality || step.accelMS2 > 2.5 + 3 * this.quality) reason = "slipped";
    if (reason) {
      cube.attached = false;
      if (reason === "slipped") this.armed = false;
      this.held = null;
      events.released = reason;
      return;
    }
    this.follow(step.tool);
    // The held cube's weight (about 20 g) on the wrist.
    events.forceN[2] -= 0.2;
  }

  private follow(tool: ToolPose): void {
    const cube = this.held!;
    const c = Math.cos(tool.yawRad);
    const s = Math.sin(tool.yawRad);
    const [u, v, w] = this.offsetToolFrame;
    cube.positionM[0] = tool.positionM[0] + c * u - s * v;
    cube.positionM[1] = tool.positionM[1] + s * u + c * v;
    cube.positionM[2] = tool.positionM[2] + w;
    cube.yawRad = tool.yawRad + this.yawOffsetRad;
  }
}
