/**
 * The folders of coordinator/ are layers with one direction (STYLE.md, Layers inside a folder;
 * docs/architecture.md, Layers of the coordinator): a folder imports only folders of its own layer or
 * of a layer below, and the folder graph has no loop, not even inside a layer. A lower folder that
 * needs something of an upper one means that thing lives too high: move it down, or have the
 * composition root (server.ts) pass it in.
 *
 * The graph is test/support/folder-graph.ts's: folder A -> folder B when a file in A imports a file
 * in B (static, type-only and dynamic imports all count); a file directly in coordinator/ is a node of
 * its own. A failure names the folders and, for each step, one import as file:line.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { coordinatorFolderEdges, folderGraph, loops, shortestCycle, type FolderEdge } from "../support/folder-graph.js";
import { REPO_ROOT } from "../support/source-scan.js";

/** The layers, bottom first; this list and docs/architecture.md's table say the same. */
const COORDINATOR_LAYERS: ReadonlyArray<{ layer: string; folders: readonly string[] }> = [
  { layer: "foundation", folders: ["errors", "json", "stats", "pdf", "async", "http", "domain"] },
  { layer: "storage", folders: ["storage", "artifacts", "store"] },
  { layer: "records", folders: ["auth", "webhooks", "kits", "catalog", "suites", "cells"] },
  { layer: "run model", folders: ["runs", "models", "tasks"] },
  { layer: "kinds", folders: ["kinds"] },
  { layer: "services", folders: ["billing", "leaderboards", "reports", "replay", "lifecycle", "scheduler", "streams", "cluster", "fleet", "exports", "data"] },
  { layer: "surface", folders: ["api", "console", "metrics.ts"] },
  { layer: "composition root", folders: ["options.ts", "server.ts"] },
];

function describeCycle(cycle: readonly string[], edges: readonly FolderEdge[]): string {
  const steps = cycle.slice(0, -1).map((from, i) => {
    const to = cycle[i + 1];
    const one = edges.find((e) => e.from === from && e.to === to)!;
    return `    ${from} -> ${to}: ${one.at} imports ${one.target}`;
  });
  return `  ${cycle.join(" -> ")}\n${steps.join("\n")}`;
}

describe("the coordinator's folders are layers", () => {
  const edges = coordinatorFolderEdges();
  const graph = folderGraph(edges);

  it("finds a loop and names one import per step (sanity: a made-up graph)", () => {
    const made = new Map([
      ["store", new Set(["runs"])],
      ["runs", new Set(["kinds"])],
      ["kinds", new Set(["store"])],
      ["api", new Set(["store"])],
    ]);
    assert.deepEqual(loops(made), [["kinds", "runs", "store"]]);
    assert.deepEqual(shortestCycle("store", new Set(["kinds", "runs", "store"]), made), ["store", "runs", "kinds", "store"]);
    assert.ok(edges.some((e) => e.from === "server.ts" && e.to === "store"), "the graph reads server.ts's imports of the store");
  });

  it("has no loop between folders", () => {
    const report = loops(graph).map((component) => {
      const cycle = shortestCycle(component[0], new Set(component), graph)!;
      return `${component.length} folders in one loop: ${component.join(", ")}\n${describeCycle(cycle, edges)}`;
    });
    if (report.length > 0) assert.fail(`folder loops in coordinator/ (move what the lower folder borrows down):\n${report.join("\n")}`);
  });

  it("lists every folder in one layer, and no folder that is gone", () => {
    const listed = COORDINATOR_LAYERS.flatMap((l) => l.folders);
    assert.equal(new Set(listed).size, listed.length, "a folder is listed in two layers");
    const present = [...graph.keys()].sort();
    assert.deepEqual(present.filter((f) => !listed.includes(f)), [], "folders of coordinator/ missing from COORDINATOR_LAYERS (and docs/architecture.md)");
    assert.deepEqual(listed.filter((f) => !present.includes(f)), [], "folders in COORDINATOR_LAYERS that coordinator/ no longer has");
  });

  it("docs/architecture.md's table of layers says the same as this list", () => {
    const doc = readFileSync(join(REPO_ROOT, "docs/architecture.md"), "utf8");
    const section = doc.split("## Layers of the coordinator")[1]?.split("\n## ")[0] ?? "";
    const rows = section
      .split("\n")
      .filter((line) => line.startsWith("| ") && !line.startsWith("| layer") && !line.startsWith("|---"))
      .map((line) => {
        const [layer, folders] = line.split("|").slice(1, 3).map((cell) => cell.trim());
        return { layer, folders: [...folders.matchAll(/`([^`]+)`/g)].map((m) => m[1].replace(/\/$/, "")) };
      });
    assert.deepEqual(rows, COORDINATOR_LAYERS, "keep the table in docs/architecture.md (Layers of the coordinator) and COORDINATOR_LAYERS alike");
  });

  it("imports point down: no folder imports a folder of a layer above its own", () => {
    const rank = new Map(COORDINATOR_LAYERS.flatMap((l, i) => l.folders.map((f) => [f, i] as const)));
    const upward = edges
      .filter((e) => rank.has(e.from) && rank.has(e.to) && rank.get(e.to)! > rank.get(e.from)!)
      .map((e) => `  ${e.from} (${COORDINATOR_LAYERS[rank.get(e.from)!].layer}) -> ${e.to} (${COORDINATOR_LAYERS[rank.get(e.to)!].layer}): ${e.at} imports ${e.target}`);
    assert.deepEqual(upward, [], "an import runs up a layer: move what it needs down");
  });
});
