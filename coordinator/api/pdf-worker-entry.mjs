// The PDF worker's entry point: a worker thread does not inherit tsx's loader, so it registers
// tsx itself before loading the TypeScript worker (coordinator/api/pdf-worker.ts).
import { register } from "tsx/esm/api";

register();
await import("./pdf-worker.ts");
