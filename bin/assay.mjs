#!/usr/bin/env node
/**
 * `npx assay ...` from the repository: the command line of cli/. It runs cli/main.ts as one bundled
 * module (scripts/compiled-entry.mjs: rebuilt when a source changed), which starts in a fraction of
 * the CPU tsx's loader takes; without a bundle, cli/assay.mjs registers tsx and starts it as an
 * installed @assay/cli does.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { compiledEntry } from "../scripts/compiled-entry.mjs";

const bundle = await compiledEntry(join(dirname(fileURLToPath(import.meta.url)), "..", "cli", "main.ts"));
if (bundle) {
  process.setSourceMapsEnabled(true);
  const { main } = await import(bundle);
  process.exitCode = await main(process.argv.slice(2), process.env);
} else {
  await import("../cli/assay.mjs");
}
