/**
 * Why an episode stopped without an outcome, as the reason an AbortSignal carries into the runner and the
 * EpisodeInterrupted the agent sends.
 */

/** Why an episode stopped without an outcome (EpisodeInterrupted.reason). */
export type InterruptReason = "estop" | "link_lost" | "agent_restart" | "policy_error" | "policy_endpoint_timeout" | "hardware_fault" | "cancelled" | "operator_abort" | "instrument_lost";

export class EpisodeAbort extends Error {
  /** `instrument`: with "instrument_lost", the instrument that stopped answering. */
  constructor(readonly reason: InterruptReason, readonly detail: string, readonly instrument?: { kind: string; name: string }) {
    super(detail);
  }
}

/** The abort `signal` carries, as an EpisodeAbort (any other reason is "cancelled"); undefined while not aborted. */
export function abortOf(signal: AbortSignal): EpisodeAbort | undefined {
  if (!signal.aborted) return undefined;
  return signal.reason instanceof EpisodeAbort ? signal.reason : new EpisodeAbort("cancelled", String(signal.reason));
}

export function throwIfAborted(signal: AbortSignal): void {
  const abort = abortOf(signal);
  if (abort) throw abort;
}
