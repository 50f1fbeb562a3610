/**
 * Every switch on a run's kind goes through the registry (STYLE.md, The run domain): outside
 * coordinator/kinds/, no production file of the coordinator compares a kind with a run kind's name;
 * it asks the kind's module (`kindModule(run.kind).traits...` or a hook) instead, so adding a kind
 * touches its own file and the registry line. A comparison that appears fails here, naming the file
 * and line.
 *
 * What counts: `kind`, `.kind` or `run_kind` compared (===, !==, ==, !=) with a quoted run kind name,
 * in either order. Other things called kind (an instrument's "camera", a safety event's
 * "estop_triggered") are not run kinds and pass. Comments are skipped.
 */
import assert from "node:assert/strict";
import { RUN_KINDS } from "../../coordinator/domain/run-kinds.js";
import { findInSources } from "../support/source-scan.js";

const NAMES = RUN_KINDS.join("|");
const KIND = String.raw`[\w.?]*kind\b`;
const COMPARISON = new RegExp(String.raw`${KIND}\s*[!=]==?\s*["'\`](?:${NAMES})["'\`]|["'\`](?:${NAMES})["'\`]\s*[!=]==?\s*${KIND}`, "i");

describe("the kind registry is the only switch on kind", () => {
  it("recognises a comparison with a run kind and passes other kinds", () => {
    for (const line of ['if (run.kind === "threshold") {', 'x = report.run_kind !== "compare";', 'if ("eval" === run.kind)']) assert.ok(COMPARISON.test(line), line);
    for (const line of ['i.kind === "camera"', 'event.kind === "estop_reset"', 'kind === "runs"', 'a.kind === "mcap"']) assert.ok(!COMPARISON.test(line), line);
  });

  it("no production file of the coordinator outside coordinator/kinds/ compares a kind with a run kind's name", () => {
    // The console's browser pages read runs through /v1 and have no registry: they are left out.
    const hits = findInSources(["coordinator"], COMPARISON, (file) => file.startsWith("coordinator/kinds/") || file.startsWith("coordinator/console/public/"));
    assert.deepEqual(hits, [], "ask the kind's module (coordinator/kinds/registry.ts: kindModule(kind).traits or a hook) instead");
  });
});
