/**
 * The agent's view of the success-predicate language (protocol/predicates). The types mirror that
 * module's API structurally, so the runner depends only on this shape and tests can hand in a tiny
 * monitor of their own.
 */
import { compileTaskMonitor } from "../../protocol/predicates/index.js";

/** One step of signals the predicates read. `tS` is seconds since the episode's control loop began. */
export interface SignalFrame {
  tS: number;
  /** Mocap poses by object name; includes "gripper" when the gripper is tracked. Yaw in radians. */
  poses: Record<string, { x: number; y: number; z: number; yaw: number }>;
  gripper?: { opening: number; holding: boolean };
  ft?: { forceN: [number, number, number]; torqueNm: [number, number, number] };
  /** Joint name to position, rad. */
  joints?: Record<string, number>;
  /** Names of the events detected since the previous frame. */
  events: string[];
}

export interface TaskStatus {
  /** Every success predicate is satisfied. */
  success: boolean;
  predicates: Record<string, { satisfied: boolean; atS?: number }>;
  stages: Record<string, { reached: boolean; atS?: number }>;
}

export interface TaskMonitor {
  update(frame: SignalFrame): void;
  status(): TaskStatus;
}

export type CompileTaskMonitor = (task: {
  success_predicates: Array<Record<string, string>>;
  stages?: Array<Record<string, string>>;
}) => TaskMonitor;

/** protocol/predicates' compiler, checked here against the shape the runner relies on. */
export const defaultCompileTaskMonitor: CompileTaskMonitor = compileTaskMonitor;
