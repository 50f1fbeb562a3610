/**
 * What a policy is shown each control step, as the wire encoders in protocol/policy/ read it. The
 * cell agent's `Observation` (cell-agent/hardware/types.ts) has this shape and more; protocol/
 * imports nothing of the agent's, so the encoders take this structural type instead.
 */

export interface PolicyCameraFrame {
  readonly width: number;
  readonly height: number;
  /** JPEG bytes of the frame. */
  readonly jpeg: Uint8Array;
  /** RGB24 pixels of the same frame, when the source has them. */
  readonly rgb?: Uint8Array;
}

export interface PolicyObservation {
  /** Monotonic time of the observation, ns. */
  readonly tNs: bigint;
  readonly jointPositionsRad?: readonly number[];
  readonly jointVelocitiesRadS?: readonly number[];
  /** 0 (closed) to 1 (open). */
  readonly gripperOpening?: number;
  /** The wrist force-torque sensor's latest reading, when the contract lists `ft_wrist`. */
  readonly wristWrench?: { readonly forceN: readonly number[]; readonly torqueNm: readonly number[] };
  /** Latest frame of each camera the policy may see. */
  readonly cameras: Readonly<Record<string, PolicyCameraFrame>>;
  readonly instruction?: string;
}
