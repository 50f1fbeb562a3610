/**
 * One sample of everything a predicate can read, assembled by the cell from its instrument
 * streams. Units are SI: metres, radians, newtons, seconds.
 */
export interface SignalFrame {
  /** Seconds since episode start; must not decrease from one frame to the next. */
  tS: number;
  /** Mocap: tracked objects by name, position in metres (world frame) and yaw in radians. An object missing here is "not tracked". */
  poses: Record<string, { x: number; y: number; z: number; yaw: number }>;
  /** Gripper state: opening 0 (closed) to 1 (open); whether the fingers report holding something. */
  gripper?: { opening: number; holding: boolean };
  /** Wrist force/torque sensor, sensor frame. */
  ft?: { forceN: [number, number, number]; torqueNm: [number, number, number] };
  /** Joint positions by joint name, radians. */
  joints?: Record<string, number>;
  /** Names of the events that occurred since the previous frame. */
  events: string[];
}
