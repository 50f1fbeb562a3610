/** The spec's run kinds (section 2, Run.kind). Each has a module in coordinator/kinds/registry.ts. */
export const RUN_KINDS = ["run", "eval", "verify", "matrix", "threshold", "compare", "transfer"] as const;
export type RunKindName = (typeof RUN_KINDS)[number];
