/**
 * A stand-in observation for pre-flight checks: mid-grey frames of each camera's size (real JPEGs,
 * so they travel the same encoding path as a camera's), zero joint positions and velocities, a
 * closed gripper and an instruction. It has the shape the episode's observations will have.
 */
import { loadSharp } from "../image/load-sharp.js";
import type { PolicyCameraFrame, PolicyObservation } from "./policy-observation.js";

export interface SyntheticObservationOptions {
  dof: number;
  cameras: ReadonlyArray<{ name: string; width: number; height: number }>;
  /** State channels to fill ("joint_positions", "joint_velocities", "gripper_state"). */
  state: readonly string[];
  instruction: string;
}

async function greyFrame(width: number, height: number): Promise<PolicyCameraFrame> {
  const sharp = await loadSharp();
  const jpeg = await sharp({ create: { width, height, channels: 3, background: { r: 128, g: 128, b: 128 } } }).jpeg({ quality: 80 }).toBuffer();
  return { width, height, jpeg: new Uint8Array(jpeg.buffer, jpeg.byteOffset, jpeg.byteLength) };
}

export async function syntheticObservation(options: SyntheticObservationOptions): Promise<PolicyObservation> {
  const frames = await Promise.all(options.cameras.map((c) => greyFrame(c.width, c.height)));
  const zeros = new Array<number>(options.dof).fill(0);
  return {
    tNs: 0n,
    cameras: Object.fromEntries(options.cameras.map((c, i) => [c.name, frames[i]])),
    ...(options.state.includes("joint_positions") ? { jointPositionsRad: zeros } : {}),
    ...(options.state.includes("joint_velocities") ? { jointVelocitiesRadS: zeros } : {}),
    ...(options.state.includes("gripper_state") ? { gripperOpening: 0 } : {}),
    instruction: options.instruction,
  };
}
