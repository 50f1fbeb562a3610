/**
 * Per-cell variation end to end (issue 25, item 5): a small run on two simulated so101 cells launched
 * with a large variation (scale 2, kinematic engine to keep it light). Each cell's variation is drawn
 * in its own process from the fleet seed and its cell id; this checks that it reached the cells' worlds
 * and their recordings: every episode's start /meta carries its cell's top-camera pose, nominal plus
 * the offset `cellVariationFor` gives for that cell, so the two cells' recorded camera poses differ.
 * The run's per-cell counts are printed (with the variation they ran under), not asserted: a handful
 * of episodes scheduled by timing cannot pin a success rate. The direction is checked apart, on the
 * same seeded layouts run on a nominal cell and on a varied one (deterministic, no scheduling).
 */
import assert from "node:assert/strict";
import { runPickEpisode } from "../../simulators/physics/pick-episode.js";
import { simCameraCalibration } from "../../simulators/render/camera-calibration.js";
import { cellVariationFor, describeCellVariation } from "../../simulators/world/cell-variation.js";
import { README_RUN_BODY } from "../fixtures.js";
import { jsonMessages, readMcapFromSpec } from "../support/mcap-spec-reader.js";
import { runEnd, startTestService, type TestService } from "./helpers.js";

const CELLS = ["so101-b", "so101-d"];
const SCALE = 2;
/** The fleet seed of startTestService. */
const FLEET_SEED = 7;
const EPISODES_PER_CELL = 10;

describe("simulated per-cell variation on a fleet", function () {
  this.timeout(180_000);
  let service: TestService;

  before(async () => {
    service = await startTestService({ cells: CELLS, simEngine: "kinematic", simCellVariation: SCALE });
  });

  after(async () => {
    await service?.stop();
  });

  it("puts each cell's own camera pose into its recordings", async () => {
    const body = { ...README_RUN_BODY, episodes: 4, policy: { ...README_RUN_BODY.policy, image: "assay/ref-policy:novice" } };
    const created = await service.api("/v1/runs", { method: "POST", json: body });
    assert.equal(created.status, 201, await created.clone().text());
    const { run } = await runEnd(service, ((await created.json()) as { id: string }).id);
    assert.equal(run.status, "completed", JSON.stringify(run.status_detail));

    const episodes = ((await (await service.api(`/v1/runs/${run.id}/episodes`)).json()) as { data: Array<Record<string, any>> }).data;
    const nominal = simCameraCalibration("top")!.extrinsics!.translation_m;
    const recorded = new Map<string, number[]>();
    for (const episode of episodes) {
      const bytes = new Uint8Array(await (await service.api(episode.mcap_url)).arrayBuffer());
      const start = jsonMessages(readMcapFromSpec(bytes), "/meta")[0].body;
      assert.equal(start.cell_id, episode.cell);
      const translation = start.cameras.top.extrinsics.translation_m as number[];
      const [dx, dy] = cellVariationFor(episode.cell, { scale: SCALE, seed: FLEET_SEED }).topCameraOffsetM;
      assert.ok(
        Math.abs(translation[0] - (nominal[0] + dx)) < 1e-9 && Math.abs(translation[1] - (nominal[1] + dy)) < 1e-9,
        `${episode.cell}: recorded top camera at ${JSON.stringify(translation)}, expected nominal ${JSON.stringify(nominal)} + (${dx}, ${dy})`,
      );
      recorded.set(episode.cell, translation);
    }
    const [a, b] = CELLS.map((cell) => recorded.get(cell));
    assert.ok(a && b, `both cells ran episodes; ran on ${[...recorded.keys()].join(", ")}`);
    assert.notDeepEqual(a, b, "the two cells' recorded camera poses differ");
    for (const cell of CELLS) {
      const mine = episodes.filter((e) => e.cell === cell);
      console.log(`      ${cell}: novice ${mine.filter((e) => e.outcome === "success").length}/${mine.length} under ${describeCellVariation(cellVariationFor(cell, { scale: SCALE, seed: FLEET_SEED }))}`);
    }
  });
});

describe("simulated per-cell variation changes success rates the way it should", function () {
  this.timeout(120_000);

  it("the novice, which aims with the nominal top-camera calibration, loses its picks on a cell whose camera sits 15 mm off", async () => {
    // so101-d at scale 2 (fleet seed 7): top camera +9.4/+11.9 mm, larger cubes; the same cell at scale 0 is the nominal cell.
    const varied = cellVariationFor("so101-d", { scale: SCALE, seed: FLEET_SEED });
    assert.ok(Math.hypot(...varied.topCameraOffsetM) > 0.012, `precondition: ${describeCellVariation(varied)}`);
    const successes = async (variation: typeof varied | undefined) => {
      let count = 0;
      for (let i = 0; i < EPISODES_PER_CELL; i++) {
        const episode = await runPickEpisode({
          engine: "kinematic", image: "assay/ref-policy:novice", seed: 9100 + i, variation,
          perturbation: { layoutJitterMm: 10, lighting: ["nominal"], distractors: "none" },
        });
        if (episode.success) count++;
      }
      return count;
    };
    // The same seeds, so the same layouts, on both cells: the simulation is deterministic, so are the counts.
    const nominal = await successes(undefined);
    const off = await successes(varied);
    console.log(`      novice, ${EPISODES_PER_CELL} layouts: nominal cell ${nominal}, so101-d at scale ${SCALE} ${off} (${describeCellVariation(varied)})`);
    assert.ok(nominal >= 3, `the novice picks on the nominal cell (${nominal}/${EPISODES_PER_CELL})`);
    assert.ok(off < nominal, `fewer picks on the cell whose camera is off: ${off} against ${nominal} of ${EPISODES_PER_CELL}`);
  });
});
