/**
 * Physics engine comparison for the simulated cells: the hand-written kinematic world against
 * MuJoCo (mujoco-js) behind the same SimWorld API, on pick-cube@v1.
 *
 *   npx tsx scripts/bench/physics.ts [episodes per policy and engine, default 40]
 *
 * Figures: module load and scene compile time, memory, simulated seconds per wall second (physics
 * only on a scripted pick, and whole expert episodes with both cameras rendered), and the expert's
 * and novice's success over seeded episodes (half color-blocks@1, half office-clutter@1, lighting
 * varied) with Wilson 95% intervals.
 */
import { execFileSync } from "node:child_process";
import { pathToFileURL } from "node:url";
import { wilsonInterval } from "../../coordinator/stats/wilson.js";
import type { SimEngine } from "../../simulators/physics/engine.js";
import { sceneMjcf } from "../../simulators/physics/mjcf.js";
import { compileMjcf, MUJOCO_LOAD_MS } from "../../simulators/physics/mujoco-module.js";
import { runPickEpisode } from "../../simulators/physics/pick-episode.js";
import { embodimentFor, jointsOf } from "../../simulators/world/embodiments.js";
import { inverseKinematics } from "../../simulators/world/kinematics.js";
import { SimWorld } from "../../simulators/world/sim-world.js";
import type { Figure } from "../bench.js";

const BENCH = "physics";
const ENGINES: SimEngine[] = ["kinematic", "mujoco"];
const round = (value: number, digits = 2) => Number(value.toFixed(digits));

/** Resident memory of a fresh Node process, with and without the MuJoCo module loaded, MB. */
function processRssMb(loadMujoco: boolean): number {
  const script = loadMujoco
    ? `const m = await (await import("mujoco-js")).default(); console.log(process.memoryUsage().rss)`
    : `console.log(process.memoryUsage().rss)`;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  return Number(out.trim()) / 1e6;
}

/** Simulated seconds per wall second of a scripted pick (no rendering): physics alone. */
function physicsOnlySpeed(engine: SimEngine): number {
  const world = new SimWorld({ model: "so101", seed: 1, engine });
  const e = embodimentFor("so101");
  const started = performance.now();
  let simulatedS = 0;
  for (let k = 0; k < 5; k++) {
    world.resetScene({
      objects: { cube: { object: "cube", positionM: [0.22, 0.01 * k, 0.015], yawRad: 0.2 } }, lighting: "nominal",
      distractors: [{ object: "block-blue", positionM: [0.3, 0.08, 0.015], yawRad: 0 }, { object: "mug", positionM: [0.28, -0.09, 0.045], yawRad: 0 }],
      homeRad: new Array(6).fill(0),
    });
    for (const [z, opening, seconds] of [[0.08, 1, 2], [0.016, 1, 1.5], [0.016, 0, 1], [0.12, 0, 2]] as const) {
      world.setGoals(jointsOf(e, inverseKinematics([0.22, 0.01 * k, z], 0.2 - Math.PI / 2)!, opening));
      world.advanceBy(seconds);
    }
    simulatedS += 3 + 6.5;
  }
  return simulatedS / ((performance.now() - started) / 1000);
}

export async function run(episodes = 40): Promise<Figure[]> {
  const figures: Figure[] = [];
  const push = (metric: string, value: number, unit: string) => figures.push({ bench: BENCH, metric, value: round(value, 3), unit });

  push("mujoco.module_load", MUJOCO_LOAD_MS, "ms");
  const compileStart = performance.now();
  compileMjcf(`${sceneMjcf([{ name: "cube", kind: "cube" }, { name: "mug", kind: "mug" }, { name: "stapler", kind: "stapler" }])}<!-- bench ${Date.now()} -->`);
  push("mujoco.scene_compile", performance.now() - compileStart, "ms");
  const baseRss = processRssMb(false);
  push("node.rss_baseline", baseRss, "MB");
  push("mujoco.rss_added_by_module", processRssMb(true) - baseRss, "MB");

  for (const engine of ENGINES) {
    physicsOnlySpeed(engine); // warm-up (JIT, wasm tier-up, model cache)
    push(`${engine}.physics_only_speed`, physicsOnlySpeed(engine), "sim_s_per_wall_s");
  }

  for (const engine of ENGINES) {
    for (const image of ["assay/ref-policy:expert", "assay/ref-policy:novice"]) {
      const policy = image.split(":")[1];
      let successes = 0;
      let wallMs = 0;
      let simulatedS = 0;
      const bySet: Record<string, number> = {};
      for (let i = 0; i < episodes; i++) {
        const distractors = i % 2 === 0 ? "color-blocks@1" : "office-clutter@1";
        const result = await runPickEpisode({
          engine, image, seed: 9000 + i, perturbation: { layoutJitterMm: 10, lighting: ["nominal", "dim", "bright", "warm"], distractors },
        });
        if (result.success) {
          successes++;
          bySet[distractors] = (bySet[distractors] ?? 0) + 1;
        }
        wallMs += result.wallMs;
        simulatedS += result.simulatedS;
      }
      const [lo, hi] = wilsonInterval(successes, episodes, 0.95);
      push(`${engine}.${policy}.success_rate`, successes / episodes, "ratio");
      push(`${engine}.${policy}.success_ci95_low`, lo, "ratio");
      push(`${engine}.${policy}.success_ci95_high`, hi, "ratio");
      for (const set of ["color-blocks@1", "office-clutter@1"]) push(`${engine}.${policy}.successes.${set}`, bySet[set] ?? 0, `of ${Math.ceil(episodes / 2)}`);
      push(`${engine}.${policy}.episode_speed`, simulatedS / (wallMs / 1000), "sim_s_per_wall_s");
      push(`${engine}.${policy}.episode_wall`, wallMs / episodes, "ms");
    }
  }
  push("process.rss_after", process.memoryUsage().rss / 1e6, "MB");
  return figures;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const figure of await run(Number(process.argv[2] ?? 40))) console.log(JSON.stringify(figure));
}
