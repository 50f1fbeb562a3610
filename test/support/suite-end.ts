/**
 * Work that waits for the end of the whole mocha run (a shared fleet's shutdown), run by the root
 * hook in test/support/root-hooks.ts. Kept free of heavy imports: mocha loads it for every run.
 */
/**
 * One list per process, kept on globalThis. Mocha loads the root hooks and the spec files as ES
 * modules (.mocharc.cjs turns require(esm) off), so there is one instance; the list stays on
 * globalThis so that a copy loaded another way (a tool that `require`s a spec, tsx's CommonJS
 * path) still registers into the list the root hook runs.
 */
const KEY = Symbol.for("assay.test.suiteEndCleanups");
const cleanups: Array<() => Promise<void>> = ((globalThis as Record<symbol, unknown>)[KEY] ??= []) as Array<() => Promise<void>>;

/**
 * Runs `cleanup` once every spec file has finished. Cleanups run last registered first: what was
 * started later may use what was started earlier (a shared fleet's coordinator uses the shared
 * PostgreSQL cluster), so it stops first.
 */
export function atSuiteEnd(cleanup: () => Promise<void>): void {
  cleanups.push(cleanup);
}

export async function runSuiteEnd(): Promise<void> {
  const errors: unknown[] = [];
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch((error: unknown) => errors.push(error));
  if (errors.length > 0) throw new AggregateError(errors, "a suite-end cleanup failed");
}
