/**
 * The simulated arm as the cameras see it, posed by forward kinematics of its arm vector
 * [yaw, shoulder, elbow, wristPitch, wristRoll] (world/kinematics.ts): a base plate, the shoulder
 * turret, the upper arm and forearm as octagonal prisms with servo blocks at the joints, and the
 * gripper (wrist body, palm and two fingers at the opening's finger offset, world/grasp.ts).
 *
 * Colours: white printed links and near-black servos and fingers, far from the red the policies
 * look for under every lighting preset (chroma well below their threshold).
 */
import { FINGER_BASE_OFFSET_M, FINGER_RADIUS_M, FINGER_SPAN_PER_OPENING_M } from "../world/grasp.js";
import { ARM_GEOMETRY, chainPoints } from "../world/kinematics.js";
import type { Rgb } from "../world/objects.js";
import { add, box, cross, normalize, prism, scale, sub, type Face, type Vec3 } from "./solids.js";

export const LINK_RGB: Rgb = [226, 226, 220];
export const SERVO_RGB: Rgb = [34, 34, 38];
export const FINGER_RGB: Rgb = [58, 58, 64];

/** Gripper layout along the tool's "up" axis (from the fingertip point towards the wrist), metres. */
const FINGER_LENGTH_M = 0.05;
const PALM_TOP_M = 0.062;
const LINK_SIDES = 8;

/** The parts of the arm that move with the joints. */
export function armFaces(arm: readonly number[], opening: number): Face[] {
  const { baseHeightM, wristToFingertipM } = ARM_GEOMETRY;
  const [yaw, , , , wristRoll] = arm;
  const [, shoulderPoint, elbowPoint, wristPoint, tip] = chainPoints(arm);
  const radial: Vec3 = [Math.cos(yaw), Math.sin(yaw), 0];
  const side: Vec3 = [-Math.sin(yaw), Math.cos(yaw), 0];
  const up: Vec3 = [0, 0, 1];
  const d1 = normalize(sub(elbowPoint, shoulderPoint));
  const d2 = normalize(sub(wristPoint, elbowPoint));
  const d3 = normalize(sub(tip, wristPoint));

  const faces: Face[] = [];
  // Shoulder turret: turns with the base yaw.
  faces.push(...box([0, 0, baseHeightM - 0.035], [radial, side, up], [0.028, 0.026, 0.04], SERVO_RGB));
  faces.push(...prism(shoulderPoint, elbowPoint, 0.018, LINK_SIDES, side, LINK_RGB));
  faces.push(...box(elbowPoint, [d1, side, cross(d1, side)], [0.021, 0.025, 0.018], SERVO_RGB));
  faces.push(...prism(elbowPoint, wristPoint, 0.015, LINK_SIDES, side, LINK_RGB));
  faces.push(...box(wristPoint, [d2, side, cross(d2, side)], [0.018, 0.022, 0.016], SERVO_RGB));

  // Gripper frame: w up the last link (tip to wrist), u the closing axis (the wrist roll turns it
  // about the link; pointing down, it lies at the tool yaw), v completes the frame.
  const w = scale(d3, -1);
  const e1 = cross(d3, side);
  const u = add(scale(e1, Math.cos(wristRoll)), scale(side, Math.sin(wristRoll)));
  const v = cross(w, u);
  const along = (du: number, dw: number): Vec3 => add(tip, add(scale(u, du), scale(w, dw)));
  const bodyLength = wristToFingertipM - PALM_TOP_M;
  faces.push(...box(along(0, PALM_TOP_M + bodyLength / 2), [u, v, w], [0.018, 0.016, bodyLength / 2], LINK_RGB));
  const fingerOffset = FINGER_BASE_OFFSET_M + FINGER_SPAN_PER_OPENING_M * opening;
  const palmHalf = FINGER_BASE_OFFSET_M + FINGER_SPAN_PER_OPENING_M + FINGER_RADIUS_M + 0.004;
  faces.push(...box(along(0, (FINGER_LENGTH_M + PALM_TOP_M) / 2), [u, v, w], [palmHalf, 0.013, (PALM_TOP_M - FINGER_LENGTH_M) / 2], SERVO_RGB));
  for (const sign of [1, -1]) {
    faces.push(...box(along(sign * fingerOffset, FINGER_LENGTH_M / 2), [u, v, w], [FINGER_RADIUS_M, 0.009, FINGER_LENGTH_M / 2], FINGER_RGB));
  }
  return faces;
}

/** The parts that never move: the base plate clamped to the table. */
export function baseFaces(): Face[] {
  return box([0, 0, 0.012], [[1, 0, 0], [0, 1, 0], [0, 0, 1]], [0.05, 0.05, 0.012], LINK_RGB);
}
