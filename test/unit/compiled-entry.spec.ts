/**
 * scripts/compiled-entry.mjs: CommonJS packages are required by the bundle (no cjs-module-lexer pass
 * at load), ES-only packages stay imports, and both kinds of import mean what they mean under Node; and
 * every entry the repository starts as a process or a worker bundles (a failed build falls back to tsx
 * without a word where no log is given, as the tests' coordinators did for months).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { crc32 } from "@node-rs/crc32";
import { compiledEntry } from "../../scripts/compiled-entry.mjs";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const PROBE = join(REPO, "test", "support", "compiled-entry-probe.ts");
/** What `npm start`, the fleet launcher, bin/assay.mjs, the coordinator's worker threads and the tests start. */
const ENTRIES = ["scripts/start.ts", "scripts/fleet.ts", "simulators/sim-cell.ts", "cell-agent/cli.ts", "cli/main.ts", "coordinator/exports/dataset-worker.ts", "coordinator/api/pdf-worker.ts"];

describe("compiled entry bundles", function () {
  this.timeout(60_000);

  it("require CommonJS packages and import ES-only ones, with Node's meaning of default and named imports", async () => {
    const reasons: string[] = [];
    const bundle = await compiledEntry(PROBE, (line: string) => reasons.push(line));
    assert.ok(bundle, `the probe was not bundled: ${reasons.join("; ")}`);
    const source = readFileSync(bundle, "utf8");
    for (const name of ["@grpc/grpc-js", "jpeg-js", "@msgpack/msgpack", "@node-rs/crc32"]) {
      assert.ok(source.includes(`__require(${JSON.stringify(name)})`), `${name} is required by the bundle`);
      assert.ok(!source.includes(`from ${JSON.stringify(name)}`), `${name} is not imported by the bundle`);
    }
    assert.match(source, /import\("roslib"\)/, "roslib (ES only) stays an import");
    // The bundle sets process.argv[1] to its entry (for "am I the main module" checks): put it back for the other specs.
    const argv1 = process.argv[1];
    const { probe } = await import(pathToFileURL(bundle).href).finally(() => (process.argv[1] = argv1!)) as typeof import("../support/compiled-entry-probe.js");
    assert.deepEqual(await probe(), { metadata: true, jpegEncode: true, msgpack: true, crc: crc32("assay"), roslibRos: true });
  });

  it("bundles every entry the repository starts, those that import this helper (the fleet launcher) too", async () => {
    for (const entry of ENTRIES) {
      const reasons: string[] = [];
      const bundle = await compiledEntry(join(REPO, entry), (line: string) => reasons.push(line));
      assert.ok(bundle, `${entry} was not bundled: ${reasons.join("; ")}`);
    }
  });
});
