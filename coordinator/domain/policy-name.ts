/**
 * The name a run's policy is shown under (runs list, run page, CLI, leaderboards): the submitted
 * `policy_name` (or a compare's name in `policies`), else the container image, the checkpoint's
 * `hf`, or "endpoint policy". A leaf: the store indexes it, the views and leaderboards show it.
 */

/** The shown name of `policy` given the submitted name (`policy_name`, a compare's key), if any. */
export function shownPolicyName(policy: Record<string, unknown> | undefined, given: unknown): string {
  if (typeof given === "string" && given.trim() !== "") return given.trim();
  if (typeof policy?.image === "string") return policy.image;
  if (typeof policy?.hf === "string") return policy.hf;
  return "endpoint policy";
}
