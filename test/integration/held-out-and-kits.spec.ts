/**
 * Two task features end to end on a simulated fleet (real coordinator, real cell-agent processes):
 *
 * - held-out instructions: a run with `instructions: "held_out"` draws only the task's held-out
 *   paraphrases, its report shows them in their own section with n and an interval, and runs that
 *   iterate (a pilot, a compare) are refused with 422;
 * - kit objects: a kit registered, received, tracked and made available is placed by a task that
 *   references `kit/<name>`; a pilot's episodes show it in the replay spec and in /meta.
 */
import assert from "node:assert/strict";
import { McapIndexedReader } from "@mcap/core";
import { loadMcapCompression } from "../../protocol/recording/mcap-compression.js";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { CATALOG_ACCOUNT_ID } from "../../coordinator/tasks/task-catalog.js";
import { README_RUN_BODY } from "../fixtures.js";
import { useSharedFleet } from "../support/shared-fleet.js";
import { runEnd, type TestService } from "./helpers.js";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const HELD_OUT = "raise the crimson block above the table";

async function json(res: Response, status: number): Promise<Json> {
  const body = (await res.json()) as Json;
  assert.equal(res.status, status, JSON.stringify(body));
  return body;
}

/** The first message of a topic of an episode's MCAP, parsed as JSON. */
async function firstMessage(service: TestService, mcapUrl: string, topic: string): Promise<Json | undefined> {
  const bytes = new Uint8Array(await (await service.api(mcapUrl)).arrayBuffer());
  const reader = await McapIndexedReader.Initialize({
    decompressHandlers: (await loadMcapCompression()).decompressHandlers,
    readable: { size: async () => BigInt(bytes.byteLength), read: async (offset, size) => bytes.subarray(Number(offset), Number(offset + size)) },
  });
  for await (const message of reader.readMessages({ topics: [topic] })) return JSON.parse(new TextDecoder().decode(message.data)) as Json;
  return undefined;
}

describe("held-out instructions and kit objects on a simulated fleet", function () {
  this.timeout(240_000);
  let service: TestService;

  useSharedFleet(["so101-b", "so101-c"], (shared) => (service = shared));

  it("a held_out run draws only held-out instructions and its report shows them apart", async () => {
    const created = await json(await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: 4, instructions: "held_out" } }), 201);
    assert.equal(created.instructions, "held_out");
    const { run } = await runEnd(service, created.id, { deadlineMs: 180_000 });
    assert.equal(run.status, "completed", JSON.stringify(run.status_detail));

    const episodes = ((await json(await service.api(`/v1/runs/${run.id}/episodes`), 200)).data) as Json[];
    assert.equal(episodes.length, 4);
    for (const episode of episodes) {
      assert.equal(episode.replay_spec.instruction, HELD_OUT);
      assert.equal(episode.replay_spec.instruction_set, "held_out");
    }
    const meta = await firstMessage(service, episodes[0].mcap_url, "/meta");
    assert.equal(meta?.perturbations_realized.instruction, HELD_OUT);
    assert.equal(meta?.perturbations_realized.instruction_set, "held_out");

    const report = await json(await service.api(`/v1/runs/${run.id}/report`), 200);
    assert.equal(report.instructions.mode, "held_out");
    assert.equal(report.instructions.held_out.n, 4);
    assert.equal(report.instructions.held_out.interval_method, "wilson");
    assert.equal(report.instructions.held_out.ci95.length, 2);
    assert.ok(report.instructions.held_out.ci95[0] <= report.instructions.held_out.success_rate);
    assert.deepEqual(Object.keys(report.instructions.held_out.by_instruction), [HELD_OUT]);
    assert.equal(report.instructions.held_out.by_instruction[HELD_OUT].n, 4);
    assert.equal(report.instructions.sampled.n, 0);
  });

  it("a default run never draws a held-out instruction", async () => {
    const created = await json(await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: 3 } }), 201);
    assert.equal(created.instructions, "sampled");
    const { run } = await runEnd(service, created.id, { deadlineMs: 180_000 });
    assert.equal(run.status, "completed");
    const report = await json(await service.api(`/v1/runs/${run.id}/report`), 200);
    assert.equal(report.instructions.mode, "sampled");
    assert.equal(report.instructions.sampled.n, 3);
    assert.equal(report.instructions.held_out.n, 0);
    assert.ok(!Object.keys(report.instructions.sampled.by_instruction).includes(HELD_OUT));
  });

  it("refuses held_out on a pilot, on a compare, and where the task has none; an eval may ask for it", async () => {
    const task = await json(await service.api("/v1/tasks", {
      method: "POST",
      json: {
        name: "held-out-pilot",
        initial_conditions: { cube: { object: "cube", pose: [0.22, 0, 0.015, 0] } },
        success_predicates: [{ lifted: "pose(cube).z > 0.06 for 1.0s" }],
        instructions: { sampled_per_episode: ["pick up the cube"], held_out: ["raise the block"] },
      },
    }), 201);
    const pilot = await json(await service.api(`/v1/tasks/${task.id}/pilot`, { method: "POST", json: { robot: "so101@latest", episodes: 1, instructions: "held_out" } }), 422);
    assert.equal(pilot.error.code, "contract_validation_failed");
    assert.match(pilot.error.message, /not allowed on a pilot: .*never sampled while iterating/);

    const compare = await json(await service.api("/v1/runs", {
      method: "POST",
      json: {
        kind: "compare", robot: "so101@latest", environment: "tabletop@1", task: "pick-cube@v1", episodes: 2, instructions: "held_out",
        policies: { a: README_RUN_BODY.policy, b: { ...README_RUN_BODY.policy, image: "assay/ref-policy:novice" } },
      },
    }), 422);
    assert.match(compare.error.message, /instructions "held_out" is not allowed on kind "compare"/);

    const bad = await json(await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, instructions: "all" } }), 422);
    assert.match(bad.error.message, /instructions must be one of sampled, held_out; got "all"/);

    // A frozen revision without held-out paraphrases cannot be evaluated on them.
    const plain = await json(await service.api("/v1/tasks", {
      method: "POST",
      json: { name: "no-held-out", initial_conditions: { cube: { object: "cube", pose: [0.22, 0, 0.015, 0] } }, success_predicates: [{ lifted: "pose(cube).z > 0.06 for 1.0s" }] },
    }), 201);
    await json(await service.api(`/v1/tasks/${plain.id}/pilot`, { method: "POST", json: { robot: "so101@latest", episodes: 1 } }), 200);
    const frozen = await json(await service.api(`/v1/tasks/${plain.id}/freeze`, { method: "POST" }), 200);
    const none = await json(await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, task: frozen.rev, instructions: "held_out" } }), 422);
    assert.match(none.error.message, /task no-held-out@v1 declares no held-out instructions/);

    const evalQuote = await service.api("/v1/quote", {
      method: "POST", json: { kind: "eval", suite: "tabletop-basics@1", robots: ["so101@3.11"], policy: README_RUN_BODY.policy, instructions: "held_out" },
    });
    assert.equal(evalQuote.status, 200, await evalQuote.clone().text());
  });

  it("places a kit object from kit/<name> in the simulated world of a pilot", async () => {
    const kit = await json(await service.api("/v1/kits", { method: "POST", json: { name: "mug-set", items: [{ desc: "ceramic mug", qty: 1 }] } }), 201);
    const operator = (await createApiKey(service.coordinator.db, CATALOG_ACCOUNT_ID, ["keys:admin", "runs:read"], new Date())).secret;
    const asOperator = (path: string, body: unknown = {}) =>
      service.api(path, { method: "POST", json: body, headers: { authorization: `Bearer ${operator}` } });
    await json(await asOperator(`/v1/kits/${kit.id}/receive`), 200);
    const badDims = await json(await asOperator(`/v1/kits/${kit.id}/track`, { mocap_markers: 4, mass_g: 350, mesh_scan: true, dimensions_mm: [70, 50] }), 422);
    assert.match(badDims.error.message, /dimensions_mm must be \[x, y, z\]/);
    const tracked = await json(await asOperator(`/v1/kits/${kit.id}/track`, { mocap_markers: 4, mass_g: 350, mesh_scan: true, dimensions_mm: [70, 50, 90] }), 200);
    assert.deepEqual(tracked.tracking.dimensions_mm, [70, 50, 90]);
    await json(await asOperator(`/v1/kits/${kit.id}/make-available`), 200);

    const task = await json(await service.api("/v1/tasks", {
      method: "POST",
      json: {
        name: "mug-stays",
        initial_conditions: { mug: { object: "kit/mug-set", pose: [0.24, -0.04, 0.045, 0], randomize: { x_mm: 5, y_mm: 5, yaw_deg: 0 } } },
        success_predicates: [{ on_table: "pose(kit/mug-set).z < 0.2" }],
      },
    }), 201);
    const pilot = await json(await service.api(`/v1/tasks/${task.id}/pilot`, { method: "POST", json: { robot: "so101@latest", episodes: 2 } }), 200);
    const { run } = await runEnd(service, pilot.run_id, { deadlineMs: 180_000 });
    assert.equal(run.status, "completed", JSON.stringify(run.status_detail));

    const episodes = ((await json(await service.api(`/v1/runs/${run.id}/episodes`), 200)).data) as Json[];
    assert.equal(episodes.length, 2);
    for (const episode of episodes) {
      assert.equal(episode.replay_spec.objects.mug.object, "kit/mug-set");
      const [x, y] = episode.replay_spec.objects.mug.pose;
      assert.ok(Math.hypot(x - 0.24, y + 0.04) <= 0.0071 + 1e-9, `placed within randomize: ${x}, ${y}`);
      // The mocap reported the kit under kit/mug-set, so the predicate bound and held.
      assert.equal(episode.outcome, "success");
      const meta = await firstMessage(service, episode.mcap_url, "/meta");
      assert.deepEqual(meta?.perturbations_realized.objects.mug.kit, { name: "mug-set", mass_g: 350, dimensions_mm: [70, 50, 90] });
    }
  });
});
