/**
 * Policies to try the other policy types with on `npm start`'s simulated fleet (README, "Bring your
 * own policy"):
 *
 *   npx tsx scripts/demo-policies.ts model hold-pose.onnx   # an ONNX checkpoint: holds the arm where it is
 *   npx tsx scripts/demo-policies.ts openpi [--port 8000]   # the expert behind openpi's WebSocket protocol
 *
 * The model is the tests' linear state policy (test/support/onnx-models.ts): observation.state
 * [1, 6] (joint positions) to action [1, 4, 6], a chunk of 4 rows of the same targets. The openpi
 * server is the tests' (test/support/openpi-server.ts): DROID keys, chunks of 10 rows.
 */
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { linearStatePolicy } from "../test/support/onnx-models.js";
import { startOpenpiServer } from "../test/support/openpi-server.js";

const [command, ...rest] = process.argv.slice(2);
if (command === "model" && rest[0]) {
  const bytes = linearStatePolicy({ stateWidth: 6, dof: 6, chunk: 4 });
  writeFileSync(rest[0], bytes);
  console.log(JSON.stringify({ file: rest[0], bytes: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") }));
} else if (command === "openpi") {
  const at = rest.indexOf("--port");
  const port = at >= 0 ? Number(rest[at + 1]) : 8000;
  const server = await startOpenpiServer({ model: "so101", chunk: 10, rowsPerRequest: 8, port });
  console.log(`openpi policy server (the simulated expert, DROID keys) at ${server.url}; Ctrl-C stops it`);
  process.once("SIGINT", () => void server.close().then(() => process.exit(0)));
} else {
  console.error("usage: npx tsx scripts/demo-policies.ts model <out.onnx> | openpi [--port 8000]");
  process.exit(2);
}
