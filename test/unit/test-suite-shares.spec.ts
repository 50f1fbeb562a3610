import { strict as assert } from "node:assert";
// @ts-expect-error: a plain ES module script without types (scripts/test-suite.mjs)
import { dealFiles, sharedFleetOf, SOLO_FILES } from "../../scripts/test-suite.mjs";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

describe("npm test's shares (scripts/test-suite.mjs)", () => {
  it("deals the heaviest files first, each to the share with the least time so far, and keeps every file once", () => {
    const times: Record<string, number> = { a: 80, b: 60, c: 50, d: 30, e: 20, f: 5 };
    const shares = dealFiles(Object.keys(times), 2, (f: string) => times[f]) as Array<{ files: string[]; s: number }>;
    assert.deepEqual(shares.map((s) => s.files), [["a", "d", "e"], ["b", "c", "f"]]);
    assert.deepEqual(shares.map((s) => s.s), [130, 115]);
    assert.deepEqual(shares.flatMap((s) => s.files).sort(), Object.keys(times));
  });

  it("gives a file it has no time for a few seconds, and one share everything with one job", () => {
    const shares = dealFiles(["x", "y"], 1, () => 5) as Array<{ files: string[] }>;
    assert.deepEqual(shares.map((s) => s.files), [["x", "y"]]);
  });

  it("deals the files of one shared fleet to one share, together, heaviest first, as one item of their summed time", () => {
    const times: Record<string, number> = { a: 80, b: 60, c: 50, d: 30, e: 20, f: 5, g: 4 };
    const fleets: Record<string, string> = { c: "A", e: "A", f: "A", d: "B", g: "B" };
    const shares = dealFiles(Object.keys(times), 2, (f: string) => times[f], (f: string) => fleets[f]) as Array<{ files: string[]; s: number }>;
    // Items: a 80, A (c, e, f) 75, b 60, B (d, g) 34.
    assert.deepEqual(shares.map((s) => s.files), [["a", "d", "g"], ["c", "e", "f", "b"]]);
    assert.deepEqual(shares.map((s) => s.s), [114, 135]);
    assert.deepEqual(shares.flatMap((s) => s.files).sort(), Object.keys(times));
  });

  it("reads a spec file's shared fleet off its useSharedFleet call: the cells and options, not the callback", () => {
    const use = "useSharedFleet"; // spelled apart, so this file's own source is not read as a fleet's user
    assert.equal(sharedFleetOf(`describe("x", () => {\n  ${use}(["so101-b", "so101-c"], (shared) => (service = shared));\n});`), '["so101-b", "so101-c"]');
    assert.equal(
      sharedFleetOf(`${use}({ cells: [CELL],\n    simEngine: "kinematic", simResets: "operator" }, (shared) => {\n  service = shared;\n});`),
      '{ cells: [CELL], simEngine: "kinematic", simResets: "operator" }',
    );
    assert.equal(sharedFleetOf(`service = await startTestService({ cells: ["so101-b"] });`), undefined);
  });

  it("names files to run alone that exist (a renamed file would silently rejoin the shares)", () => {
    for (const file of SOLO_FILES as string[]) assert.ok(existsSync(new URL(`../../${file}`, import.meta.url)), file);
  });

  it("ends its log with each failure again (file, title, message, our innermost frame), then the count", async function () {
    this.timeout(60_000);
    const dir = mkdtempSync(join(tmpdir(), "assay-suite-failure-"));
    try {
      const spec = join(dir, "always-fails.spec.ts");
      writeFileSync(spec, [
        'import assert from "node:assert/strict";',
        'describe("a demo", () => {',
        '  it("fails on purpose", () => assert.equal(1, 2, "one is not two\\nsecond line"));',
        '  it("passes", () => undefined);',
        "});",
        "",
      ].join("\n"));
      const repo = new URL("../..", import.meta.url).pathname;
      const run = await promisify(execFile)(process.execPath, ["scripts/test-suite.mjs", spec], { cwd: repo }).then(
        () => assert.fail("a failing spec must end npm test with a non-zero code"),
        (error: { code: number; stdout: string }) => error,
      );
      assert.equal(run.code, 1);
      const tail = run.stdout.trimEnd().split("\n").slice(-4);
      assert.match(tail[0], /^failed: .*always-fails\.spec\.ts: a demo fails on purpose$/);
      assert.equal(tail[1], "failed:   AssertionError: one is not two | second line |  | 1 !== 2");
      assert.match(tail[2], /^failed:   at .*always-fails\.spec\.ts:3:\d+\)?$/);
      assert.equal(tail[3], "1 passed, 1 failed, 0 skipped");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
