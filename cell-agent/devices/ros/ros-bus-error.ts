/**
 * What went wrong talking to a ROS robot through rosbridge. `code` is stable for callers (the runner
 * pauses on "disconnected" and "stale", aborts on the rest); `message` says what to check.
 */
export type RosBusErrorCode =
  /** No rosbridge connection right now; the bus is reconnecting by itself. Hold position and wait. */
  | "disconnected"
  /** Joint readings are older than allowed (robot stopped publishing, or the link lags). */
  | "stale"
  /** A service answered with failure, or not at all within the timeout. */
  | "service_failed"
  /** The caller passed something unusable (wrong number of joints, non-finite targets). */
  | "invalid_argument"
  /** close() was called; the bus will not reconnect. */
  | "closed";

export class RosBusError extends Error {
  constructor(readonly code: RosBusErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "RosBusError";
  }
}
