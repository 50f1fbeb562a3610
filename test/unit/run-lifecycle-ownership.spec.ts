/**
 * One module owns run status: coordinator/lifecycle/run-lifecycle.ts is the only production code that
 * writes a run's status or result (through the store's setRunStatus / setRunResult), so every
 * ending has the same consequences (cancelled episodes, stored result, events after the commit).
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".spec.ts") ? [path] : [];
  });
}

describe("run lifecycle ownership", () => {
  it("only run-lifecycle.ts calls setRunStatus and setRunResult (besides their definition in the store)", () => {
    const writers = sources(join(root, "coordinator"))
      .filter((path) => /\bsetRun(Status|Result)\(/.test(readFileSync(path, "utf8")))
      .map((path) => relative(root, path))
      .sort();
    assert.deepEqual(writers, ["coordinator/lifecycle/run-lifecycle.ts", "coordinator/store/runs-repo.ts"]);
  });

  it("the statuses a run ends in are written by one function, end()", () => {
    const text = readFileSync(join(root, "coordinator/lifecycle/run-lifecycle.ts"), "utf8");
    // scheduled() and started() write open statuses; every terminal write is end()'s.
    const calls = [...text.matchAll(/setRunStatus\(tx, \w+, ("[a-z]+"|status)/g)].map((m) => m[1]);
    assert.deepEqual(calls.sort(), ['"running"', '"scheduling"', "status"]);
    assert.match(text, /const status: TerminalRunStatus = ending\.status;/);
  });
});
