// The PDF worker's entry point. A worker thread does not inherit tsx's loader: it loads the
// TypeScript worker (coordinator/api/pdf-worker.ts) as one bundled module when one can be built
// (scripts/compiled-entry.mjs, cached in node_modules/.cache/assay), else through tsx.
import { fileURLToPath } from "node:url";
import { importEntry } from "../../scripts/compiled-entry.mjs";

await importEntry(fileURLToPath(new URL("./pdf-worker.ts", import.meta.url)), (message) => console.error(`PDF worker: ${message}`));
