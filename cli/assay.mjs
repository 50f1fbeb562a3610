#!/usr/bin/env node
/**
 * The `assay` executable: registers tsx (Node 20 cannot run TypeScript by itself) and hands over to
 * main.ts with the arguments and the environment. The repository's bin/assay.mjs imports this file, so
 * `npx assay` in the repository and an installed @assay/cli start the same way.
 */
import { register } from "tsx/esm/api";

register();
const { main } = await import("./main.ts");
process.exitCode = await main(process.argv.slice(2), process.env);
