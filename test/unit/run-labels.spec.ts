/**
 * Named runs (issue 28, item 2): the metadata rules (Stripe's: 50 keys, keys of 1..40 characters
 * without square brackets, string values of at most 500 characters), the update's merge, and the
 * facets the runs list filters on, written at insert and, for runs stored before them, by the
 * migration's backfill, which must give the same rows (both engines).
 */
import assert from "node:assert/strict";
import { DEFAULT_ACCOUNT_ID, ensureAccount } from "../../coordinator/store/accounts-repo.js";
import { parseWith } from "../../coordinator/json/zod-errors.js";
import { labelsOfRequest, mergeMetadata, Metadata, RunName, withoutLabels } from "../../coordinator/runs/run-labels.js";
import { MIGRATIONS } from "../../coordinator/store/migrations.js";
import { listRuns, setRunLabels } from "../../coordinator/store/run-list-repo.js";
import { insertRun, setRunUnits, type NewRun } from "../../coordinator/store/runs-repo.js";
import type { Db } from "../../coordinator/store/database.js";
import { openTestDatabase, STORE_ENGINES } from "../support/test-database.js";

const problem = (schema: Parameters<typeof parseWith>[0], value: unknown): string => {
  try {
    parseWith(schema, value);
  } catch (error) {
    return (error as Error).message;
  }
  return "accepted";
};

describe("run metadata and names: the rules", () => {
  it("accepts Stripe's limits exactly and refuses one past each, naming the key and the rule", () => {
    const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, "v"]));
    assert.equal(problem(Metadata, { ...fifty }), "accepted");
    assert.match(problem(Metadata, { ...fifty, k50: "v" }), /^metadata has 51 keys; at most 50 are allowed/);
    assert.equal(problem(Metadata, { ["k".repeat(40)]: "x".repeat(500) }), "accepted");
    assert.match(problem(Metadata, { ["k".repeat(41)]: "v" }), /^metadata key is 41 characters; keys are at most 40; got "k{41}"$/);
    assert.match(problem(Metadata, { team: "x".repeat(501) }), /^team must be a string of at most 500 characters.*got 501 characters/);
    assert.match(problem(Metadata, { "run[1]": "v" }), /^metadata key contains a square bracket; keys may not contain \[ or \]; got "run\[1\]"$/);
    assert.match(problem(Metadata, { "": "v" }), /^metadata keys must be 1 to 40 characters; got an empty key/);
    assert.match(problem(Metadata, { lr: 3 }), /^lr must be a string .*\(send numbers and booleans as strings/);
    assert.match(problem(Metadata, { cfg: { a: 1 } }), /nested objects are not allowed; got \{"a":1\}$/);
    assert.equal(problem(Metadata, { "with spaces and ünïcode": "ok", "dots.and-dashes": "" }), "accepted");
  });

  it("takes a name of one line up to 100 characters", () => {
    assert.equal(problem(RunName, "Expert baseline (seed set A)"), "accepted");
    assert.equal(problem(RunName, "n".repeat(100)), "accepted");
    for (const bad of ["", "   ", "n".repeat(101), "a\tb", "a\nb"]) assert.match(problem(RunName, bad), /must be 1 to 100 characters on one line/, JSON.stringify(bad));
  });

  it("keeps the submitted labels without empty values, merges an update and keeps labels out of what a quote compares", () => {
    assert.deepEqual(labelsOfRequest({ name: "A", metadata: { a: "1", b: "" } }), { name: "A", metadata: { a: "1" } });
    assert.deepEqual(labelsOfRequest({}), { name: null, metadata: {} });
    assert.deepEqual(mergeMetadata({ a: "1", b: "2" }, { b: "", c: "3" }, "run_x"), { a: "1", c: "3" });
    const full = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, "v"]));
    assert.deepEqual(mergeMetadata(full, { k0: "", extra: "v" }, "run_x"), { ...withoutKey(full, "k0"), extra: "v" }, "a removal makes room in the same update");
    assert.throws(() => mergeMetadata(full, { extra: "v" }, "run_x"), /metadata would have 51 keys after this update; at most 50 are allowed \(the run has 50\)/);
    assert.deepEqual(withoutLabels({ kind: "run", name: "A", metadata: { a: "1" }, episodes: 2 }), { kind: "run", episodes: 2 });
  });
});

function withoutKey(record: Record<string, string>, key: string): Record<string, string> {
  const { [key]: _dropped, ...rest } = record;
  return rest;
}

const container = (image: string) => ({ type: "container", image });
const base = (id: string, created: string): Omit<NewRun, "request"> => ({
  id, accountId: DEFAULT_ACCOUNT_ID, kind: "run", created,
  resolvedPins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v2", perturbation_rev: "assay-perturb@1" },
  plan: { model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 1, control_rate_hz: 30, max_duration_s: 20 },
  priority: "standard", episodesTotal: 1,
});
const RUNS: NewRun[] = [
  { ...base("run_named", "2026-11-01T00:00:01.000Z"), request: { policy: container("lab/expert:1"), policy_name: "expert" }, labels: { name: "Expert", metadata: { exp: "a" } } },
  { ...base("run_image", "2026-11-01T00:00:02.000Z"), request: { policy: container("lab/novice:1") } },
  { ...base("run_hf", "2026-11-01T00:00:03.000Z"), request: { policy: { type: "checkpoint", hf: "lab/pi0@main", runtime: "lerobot" } } },
  { ...base("run_endpoint", "2026-11-01T00:00:04.000Z"), request: { policy: { type: "endpoint", url: "https://x" }, policy_name: "  " } },
  {
    ...base("run_compare", "2026-11-01T00:00:05.000Z"), kind: "compare", request: { policies: {} },
    units: [
      { key: "policy:a", robot: "so101@3.11", model: "so101", firmware: "3.11", environment: "tabletop@1", task: "pick-cube@v2", policy: container("lab/a:1"), policy_name: "a" },
      { key: "policy:b", robot: "so101@3.12", model: "so101", firmware: "3.12", environment: "tabletop@1", task: "pick-cube@v2", policy: container("lab/b:1"), policy_name: "b" },
    ],
  },
  {
    ...base("run_eval", "2026-11-01T00:00:06.000Z"), kind: "eval", request: { policy: container("lab/e:1"), policy_name: "evalled" },
    units: [{ key: "u0", robot: "koch@1.0", model: "koch", firmware: "1.0", environment: "tabletop@1", task: "stack@v1", policy: container("lab/e:1") }],
  },
];

for (const engine of STORE_ENGINES) {
  describe(`runs list facets and labels (${engine})`, function () {
    this.timeout(60_000);
    let db: Db;
    beforeEach(async () => {
      db = await openTestDatabase(engine);
      await ensureAccount(db, DEFAULT_ACCOUNT_ID, "Default account", "2026-11-01T00:00:00.000Z");
      for (const run of RUNS) await insertRun(db, run);
    });
    afterEach(() => db.close());

    const facets = () => db.prepare("SELECT run_id, facet, value FROM run_facets ORDER BY run_id, facet, value").all();
    const found = async (query: Partial<Parameters<typeof listRuns>[1]>) => (await listRuns(db, { accountId: DEFAULT_ACCOUNT_ID, limit: 100, ...query })).map((r) => r.id);

    it("finds runs by task name or revision, robot model or pin, and the shown policy name", async () => {
      assert.deepEqual(await found({ task: "pick-cube" }), ["run_compare", "run_endpoint", "run_hf", "run_image", "run_named"]);
      assert.deepEqual(await found({ task: "stack@v1" }), ["run_eval"]);
      assert.deepEqual(await found({ robot: "so101@3.12" }), ["run_compare"]);
      assert.deepEqual(await found({ robot: "koch" }), ["run_eval"]);
      assert.deepEqual(await found({ policy: "expert" }), ["run_named"]);
      assert.deepEqual(await found({ policy: "lab/novice:1" }), ["run_image"]);
      assert.deepEqual(await found({ policy: "lab/pi0@main" }), ["run_hf"]);
      assert.deepEqual(await found({ policy: "endpoint policy" }), ["run_endpoint"]);
      assert.deepEqual(await found({ policy: "b" }), ["run_compare"]);
      assert.deepEqual(await found({ policy: "evalled" }), ["run_eval"]);
      assert.deepEqual(await found({ metadata: { exp: "a" } }), ["run_named"]);
    });

    it("the migration's backfill writes the facets insert writes, for runs stored before them", async () => {
      const written = await facets();
      await db.exec("DELETE FROM run_facets");
      const texts = MIGRATIONS.map((m) => (typeof m === "string" ? m : m[engine]));
      const text = texts.find((t) => t.includes("CREATE TABLE run_facets"))!;
      await db.exec(text.slice(text.indexOf("WITH u AS")));
      assert.deepEqual(await facets(), written);
    });

    it("finds a run whose units were replaced (a threshold checkpoint) under the old and the new policy", async () => {
      const [unit] = RUNS.find((r) => r.id === "run_eval")!.units!;
      await setRunUnits(db, "run_eval", [{ ...unit!, policy: container("lab/e:2") }]);
      assert.deepEqual(await found({ policy: "evalled" }), ["run_eval"]);
      await setRunUnits(db, "run_eval", [{ ...unit!, policy: container("lab/e:3"), policy_name: "checkpoint 3" }]);
      assert.deepEqual(await found({ policy: "checkpoint 3" }), ["run_eval"]);
      assert.deepEqual(await found({ policy: "evalled" }), ["run_eval"], "and still under the name it had");
    });

    it("relabels a run: the list finds it under its new metadata only", async () => {
      await setRunLabels(db, { id: "run_image", accountId: DEFAULT_ACCOUNT_ID }, { name: "Novice", metadata: { exp: "b" } });
      assert.deepEqual(await found({ metadata: { exp: "b" } }), ["run_image"]);
      await setRunLabels(db, { id: "run_image", accountId: DEFAULT_ACCOUNT_ID }, { name: null, metadata: {} });
      assert.deepEqual(await found({ metadata: { exp: "b" } }), []);
      assert.equal((await listRuns(db, { accountId: DEFAULT_ACCOUNT_ID, limit: 1, policy: "lab/novice:1" }))[0]!.name, null);
    });
  });
}
