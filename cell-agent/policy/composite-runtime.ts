/**
 * Several PolicyRuntimes behind one: the hardware's own (containers, checkpoints) and the agent's
 * built-in ones (endpoints). A runtime that declares `policyTypes` gets exactly those policy
 * types; every other type goes to the first runtime that declares none.
 */
import type { PolicyRuntime, PolicySession, PolicyStartContext } from "../hardware/types.js";

export type TypedPolicyRuntime = PolicyRuntime & { readonly policyTypes?: readonly string[] };

export class CompositePolicyRuntime implements PolicyRuntime {
  constructor(private readonly runtimes: readonly TypedPolicyRuntime[]) {}

  available(): string[] {
    return [...new Set(this.runtimes.flatMap((r) => r.available()))];
  }

  start(policy: Record<string, unknown>, robot: { model: string; dof: number }, context?: PolicyStartContext): Promise<PolicySession> {
    const type = typeof policy.type === "string" ? policy.type : "container";
    const runtime = this.runtimes.find((r) => r.policyTypes?.includes(type)) ?? this.runtimes.find((r) => !r.policyTypes);
    if (!runtime) return Promise.reject(new Error(`this cell cannot run policies of type ${JSON.stringify(type)}`));
    return runtime.start(policy, robot, context);
  }
}
