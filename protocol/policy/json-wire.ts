/**
 * The JSON endpoint wire (policy `protocol` "json", the default), one request per control step over
 * HTTP(S) POST or a WebSocket:
 *   {session, step, t, instruction?, joint_positions?, joint_velocities?, gripper_opening?,
 *    ft_wrist?: {force_n: [x, y, z], torque_nm: [x, y, z]}, cameras: {<name>: {jpeg_b64, width, height}},
 *    reset?: {seed, control_rate_hz}}
 * (`reset` only on step 0 of an episode; `session` is new per episode), answered by
 *   {action: number[]}            (on a WebSocket also `step`, echoed, to match the reply)
 * Between two episodes on a warm policy container the cell sends, on a WebSocket of its own,
 *   {type: "reset"}   answered by   {reset: "ok"}
 * after the server has forgotten every episode; any other answer, or none within 5 s, and the cell
 * replaces the container (cell-agent/policy/container-runtime.ts).
 * The cell agent (cell-agent/policy/endpoint-runtime.ts) and the submission's pre-flight speak it.
 */
import type { PolicyObservation } from "./policy-observation.js";

/** The request body of one step. */
export function encodeObservation(session: string, step: number, observation: PolicyObservation, reset?: { seed: number; controlRateHz: number }): Record<string, unknown> {
  const cameras: Record<string, { jpeg_b64: string; width: number; height: number }> = {};
  for (const [name, frame] of Object.entries(observation.cameras)) {
    cameras[name] = { jpeg_b64: Buffer.from(frame.jpeg).toString("base64"), width: frame.width, height: frame.height };
  }
  return {
    session, step, t: Number(observation.tNs) / 1e9,
    ...(observation.instruction !== undefined ? { instruction: observation.instruction } : {}),
    ...(observation.jointPositionsRad ? { joint_positions: observation.jointPositionsRad } : {}),
    ...(observation.jointVelocitiesRadS ? { joint_velocities: observation.jointVelocitiesRadS } : {}),
    ...(observation.gripperOpening !== undefined ? { gripper_opening: observation.gripperOpening } : {}),
    ...(observation.wristWrench ? { ft_wrist: { force_n: observation.wristWrench.forceN, torque_nm: observation.wristWrench.torqueNm } } : {}),
    cameras,
    ...(reset ? { reset: { seed: reset.seed, control_rate_hz: reset.controlRateHz } } : {}),
  };
}

/** The action of a reply, or an Error saying what came instead of `{"action": [dof finite numbers]}`. */
export function actionOf(reply: unknown, dof: number): number[] {
  const action = (reply as { action?: unknown } | null)?.action;
  if (!Array.isArray(action) || action.length !== dof || !action.every((v) => typeof v === "number" && Number.isFinite(v))) {
    throw new Error(`the policy endpoint must answer {"action": [${dof} finite numbers]}; got ${JSON.stringify(reply)?.slice(0, 200)}`);
  }
  return action as number[];
}
