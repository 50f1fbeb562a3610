/**
 * No floating promises: now that the store is asynchronous, a store call that is neither awaited
 * nor handled runs after its caller moved on (a decision made on stale rows, a write outside its
 * transaction, an error nobody sees), and a promise handed where a plain callback is expected (a
 * timer, an event listener) rejects into the void. `npm run lint` runs oxlint's type-aware
 * no-floating-promises and no-misused-promises rules over the code; this fails on any finding,
 * quoting oxlint's report (file, line and what to do).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

describe("promises", function () {
  this.timeout(120_000);

  it("are awaited or handled everywhere (npm run lint finds nothing)", () => {
    const script = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts.lint;
    assert.match(script, /^oxlint --type-aware .*-D typescript\/no-floating-promises -D typescript\/no-misused-promises /);
    const [, ...args] = script.split(/\s+/);
    const run = spawnSync(join(root, "node_modules/.bin/oxlint"), [...args, "--format", "unix"], { cwd: root, encoding: "utf8" });
    assert.equal(run.error, undefined, `oxlint did not run: ${run.error?.message}`);
    const findings = run.stdout.split("\n").filter((line) => /:\d+:\d+:/.test(line));
    assert.deepEqual(findings, [], `await these promises, or mark a deliberate fire-and-forget with void and handle its rejection:\n${findings.join("\n")}`);
    assert.equal(run.status, 0, `oxlint failed:\n${run.stdout}\n${run.stderr}`);
  });
});
