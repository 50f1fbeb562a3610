/**
 * Why an endpoint policy failed its pre-flight at submission: the policy itself is wrong
 * ("invalid_policy"), the endpoint cannot be reached ("unreachable"), it did not answer in time
 * ("timeout"), or it answered something the robot cannot execute ("bad_reply"). The message says
 * what was received or what went wrong, in plain words, for the customer.
 */

export type PreflightFailure = "invalid_policy" | "unreachable" | "timeout" | "bad_reply";

export class PreflightError extends Error {
  constructor(readonly failure: PreflightFailure, message: string) {
    super(message);
    this.name = "PreflightError";
  }
}
