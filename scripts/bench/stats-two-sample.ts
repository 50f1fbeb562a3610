/**
 * Figure group of the `stats` bench (issue 25, item 4): the two-sample rules when cells differ.
 * Each arm runs EPISODES episodes split evenly over its own `cells` cells, whose rates are drawn from
 * a Beta around the arm's rate with the ICC shown (the arms share no cell). Per setting, RUNS seeded
 * replicates, and on each the new rules and the rules before issue 25 on the same draws:
 *
 * - compare_unpaired: new, the beta-binomial posterior difference's 95% interval excludes 0
 *   (`betaBinomialDifference`); old, Newcombe's interval of the pooled counts excludes 0;
 * - transfer (source measured in the run: target and source episode i share a seed, here with no
 *   seed effect): new, the same posterior difference; old, the seed-paired Newcombe interval;
 * - leaderboard (two entries): new, the tier rule (posterior_not_better <= 0.6 · 0.05 / 2); old, the
 *   Fisher rule at effective counts (scripts/bench/stats-legacy-leaderboard-tiers.ts).
 *
 * `false_difference`: share of replicates with equal rates (0.5 and 0.5, 0.7 and 0.7, averaged)
 * where the rule claims a difference (either direction; target <= alpha = 0.05). `power`: 0.7 against
 * 0.5, share where it claims the right one better. Monte Carlo standard error about 0.005 at 0.05
 * (null: 2 x RUNS replicates) and 0.016 at 0.5 (power).
 *
 *   npm run bench -- stats              (with the other groups)
 *   npx tsx scripts/bench/stats-two-sample.ts    (alone)
 */
import { pathToFileURL } from "node:url";
import { betaBinomialDifference } from "../../coordinator/stats/beta-binomial-difference.js";
import { rankEntries } from "../../coordinator/stats/leaderboard-tiers.js";
import { pairedDifferenceInterval } from "../../coordinator/stats/paired-difference.js";
import { binomialSample, cellRateSample, mulberry32, type Uniform } from "../../coordinator/stats/simulation.js";
import { newcombeDifference } from "../../coordinator/stats/two-proportions.js";
import type { Figure } from "../bench.js";
import { rankEntries as legacyRankEntries } from "./stats-legacy-leaderboard-tiers.js";

const BENCH = "stats";
const EPISODES = 200;
const RUNS = 1000;
const CELLS = [3, 4];
const ICCS = [0.05, 0.1];
const NULL_RATES = [0.5, 0.7];

const figure = (metric: string, value: number, unit = "ratio"): Figure => ({ bench: BENCH, metric, value: Number(value.toFixed(6)), unit });

/** One arm's episodes: outcomes in episode order, episode i on cell i mod cells, and the per-cell counts. */
function drawArm(random: Uniform, rate: number, cells: number, icc: number): { outcomes: boolean[]; clusters: Array<{ k: number; n: number }> } {
  const thetas = Array.from({ length: cells }, () => cellRateSample(random, rate, icc));
  const clusters = thetas.map(() => ({ k: 0, n: 0 }));
  const outcomes: boolean[] = [];
  for (let i = 0; i < EPISODES; i++) {
    const cell = i % cells;
    const ok = random() < thetas[cell];
    outcomes.push(ok);
    clusters[cell].n += 1;
    if (ok) clusters[cell].k += 1;
  }
  return { outcomes, clusters };
}

type Claim = 1 | -1 | 0;
const claimOf = (ci: readonly [number, number]): Claim => (ci[0] > 0 ? 1 : ci[1] < 0 ? -1 : 0);

interface Claims { compareNew: Claim; compareOld: Claim; transferNew: Claim; transferOld: Claim; boardNew: Claim; boardOld: Claim }

function replicate(random: Uniform, rateA: number, rateB: number, cells: number, icc: number): Claims {
  const a = drawArm(random, rateA, cells, icc);
  const b = drawArm(random, rateB, cells, icc);
  const ka = a.clusters.reduce((s, c) => s + c.k, 0);
  const kb = b.clusters.reduce((s, c) => s + c.k, 0);
  const posterior = betaBinomialDifference(a.clusters, b.clusters);
  const tally = { both: 0, onlyA: 0, onlyB: 0, neither: 0 };
  a.outcomes.forEach((x, i) => {
    const y = b.outcomes[i];
    if (x && y) tally.both++;
    else if (x) tally.onlyA++;
    else if (y) tally.onlyB++;
    else tally.neither++;
  });
  const entries = [{ id: "a", k: ka, n: EPISODES, clusters: a.clusters }, { id: "b", k: kb, n: EPISODES, clusters: b.clusters }];
  const boardClaim = (ranking: { tiers: number; entries: Array<{ id: string }> }): Claim => (ranking.tiers < 2 ? 0 : ranking.entries[0].id === "a" ? 1 : -1);
  return {
    compareNew: claimOf(posterior.ci),
    compareOld: claimOf(newcombeDifference(ka, EPISODES, kb, EPISODES).ci),
    transferNew: claimOf(posterior.ci),
    transferOld: claimOf(pairedDifferenceInterval(tally, 0.95).ci),
    boardNew: boardClaim(rankEntries(entries)),
    boardOld: boardClaim(legacyRankEntries(entries)),
  };
}

const RULES: Array<[keyof Claims, string]> = [
  ["compareNew", "compare_unpaired.new"], ["compareOld", "compare_unpaired.old"],
  ["transferNew", "transfer.new"], ["transferOld", "transfer.old"],
  ["boardNew", "leaderboard.new"], ["boardOld", "leaderboard.old"],
];

/** `runs` replicates per setting (RUNS unless given); `onFigure` sees each figure as it is made. */
export function run(runs = RUNS, onFigure: (f: Figure) => void = () => {}): Figure[] {
  const figures: Figure[] = [];
  const RUNS_HERE = runs;
  let seed = 26000;
  for (const cells of CELLS) {
    for (const icc of ICCS) {
      const at = `${cells}_cells.icc_${icc}`;
      const falseClaims = Object.fromEntries(RULES.map(([key]) => [key, 0])) as Record<keyof Claims, number>;
      for (const p of NULL_RATES) {
        const random = mulberry32(seed++);
        for (let r = 0; r < RUNS_HERE; r++) {
          const claims = replicate(random, p, p, cells, icc);
          for (const [key] of RULES) if (claims[key] !== 0) falseClaims[key]++;
        }
      }
      const power = Object.fromEntries(RULES.map(([key]) => [key, 0])) as Record<keyof Claims, number>;
      const random = mulberry32(seed++);
      for (let r = 0; r < RUNS_HERE; r++) {
        const claims = replicate(random, 0.7, 0.5, cells, icc);
        for (const [key] of RULES) if (claims[key] === 1) power[key]++;
      }
      for (const [key, name] of RULES) {
        const made = [
          figure(`two_sample.${name}.false_difference.${at}`, falseClaims[key] / (RUNS_HERE * NULL_RATES.length)),
          figure(`two_sample.${name}.power_0.7_vs_0.5.n_${EPISODES}.${at}`, power[key] / RUNS_HERE),
        ];
        made.forEach(onFigure);
        figures.push(...made);
      }
    }
  }
  return figures;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  // `npx tsx scripts/bench/stats-two-sample.ts [runs]`: fewer replicates for a quick look.
  const runs = process.argv[2] ? Number(process.argv[2]) : RUNS;
  run(runs, (f) => console.log(JSON.stringify(f)));
}
