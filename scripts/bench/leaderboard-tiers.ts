/**
 * Benchmark: the operating characteristics behind docs/leaderboards.md, one JSON line per
 * figure ({"bench": "leaderboard-tiers", "metric": "...", "value": 0.01, "unit": "ratio"}). Seeded
 * simulations:
 *
 * - tiers: the family-wise error of rankEntries' tier rule (P(some pair in different tiers is equal
 *   or reversed)) when every policy is equal and when they come in well-separated equal pairs; its
 *   power to separate policies 10 and 20 points apart at n = 50, 100, 200. Every board is multi-cell,
 *   as real boards are (issue 25 item 4): each entry's episodes split evenly over CELLS cells whose
 *   rates are drawn from a Beta around the entry's rate with ICC, default 3 cells at ICC 0.05, and
 *   the clustered groups vary the cells (4, 8) and the ICC (0, 0.02, 0.05, 0.1) beside the same boards
 *   ranked as if their episodes were independent (`cells_ignored`);
 * - bradley-terry: coverage of fitBradleyTerry's 95% intervals of the centred log-strengths;
 * - timing: rankEntries and fitBradleyTerry on 200 policies.
 *
 *   npm run bench -- leaderboard-tiers      (once registered in scripts/bench.ts)
 *   npx tsx scripts/bench/leaderboard-tiers.ts
 */

import { pathToFileURL } from "node:url";
import type { Figure } from "../bench.js";
import { fitBradleyTerry, type PairwiseComparison } from "../../coordinator/stats/bradley-terry.js";
import { simulateBradleyTerryCoverage, type BradleyTerrySetting } from "../../coordinator/stats/bradley-terry-simulation.js";
import { rankEntries } from "../../coordinator/stats/leaderboard-tiers.js";
import { simulateTiers, type TierSetting } from "../../coordinator/stats/leaderboard-tiers-simulation.js";
import { mulberry32 } from "../../coordinator/stats/simulation.js";

const BENCH = "leaderboard-tiers";
/** Boards per figure; `npx tsx scripts/bench/leaderboard-tiers.ts [boards]` for fewer. */
let BOARDS = 2000;
/** The cell model of every board that does not say otherwise. */
const CELLS = 3;
const ICC = 0.05;
const CELL_MODEL = { cells: CELLS, icc: ICC } as const;
const AT_CELLS = `${CELLS}_cells.icc_${ICC}`;
const REPLICATIONS = 2000;
const EPISODES = [50, 100, 200];

const figure = (metric: string, value: number, unit = "ratio"): Figure => ({ bench: BENCH, metric, value, unit });

function tierFigures(at: string, setting: TierSetting, seed: number, power: boolean): Figure[] {
  const result = simulateTiers(setting, BOARDS, seed);
  const figures = [figure(`${at}.family_wise_error`, result.familyWiseError), figure(`${at}.mean_tiers`, result.meanTiers, "tiers")];
  if (power) {
    figures.push(figure(`${at}.all_separated`, result.allSeparated));
    figures.push(figure(`${at}.separated_pairs`, result.separatedPairs));
  }
  return figures;
}

function nullFigures(): Figure[] {
  const figures: Figure[] = [];
  let seed = 100;
  for (const policies of [2, 5, 10, 20]) {
    for (const p of [0.5, 0.8]) {
      for (const n of EPISODES) {
        figures.push(...tierFigures(`tiers.equal.${policies}_policies.p_${p}.n_${n}.${AT_CELLS}`, { rates: new Array(policies).fill(p), n, ...CELL_MODEL }, seed++, false));
      }
    }
  }
  // Equal pairs far apart: every boundary but the ones inside a pair is true, the hardest case for
  // the Bonferroni bound's count of 2 (m - 1) null events.
  for (const n of EPISODES) {
    figures.push(...tierFigures(`tiers.equal_pairs.0.2_0.2_0.5_0.5_0.8_0.8.n_${n}.${AT_CELLS}`, { rates: [0.2, 0.2, 0.5, 0.5, 0.8, 0.8], n, ...CELL_MODEL }, seed++, false));
  }
  for (const policies of [2, 5]) {
    for (const cells of [4, 8]) {
      for (const icc of [0, 0.05, 0.1]) {
        const setting = { rates: new Array(policies).fill(0.7), n: 200, cells, icc };
        const at = `tiers.equal_clustered.${policies}_policies.p_0.7.n_200.${cells}_cells.icc_${icc}`;
        figures.push(...tierFigures(at, setting, seed, false));
        // The same boards ranked as if the episodes were independent: what unmodelled cells cost.
        figures.push(...tierFigures(`${at}.cells_ignored`, { ...setting, ignoreCells: true }, seed++, false));
      }
    }
  }
  return figures;
}

function powerFigures(): Figure[] {
  const figures: Figure[] = [];
  let seed = 200;
  for (const [low, high] of [[0.5, 0.6], [0.5, 0.7], [0.7, 0.8], [0.7, 0.9]]) {
    for (const n of EPISODES) {
      figures.push(...tierFigures(`tiers.two.${high}_vs_${low}.n_${n}.${AT_CELLS}`, { rates: [high, low], n, ...CELL_MODEL }, seed++, true));
    }
  }
  for (const [label, rates] of [
    ["five_10_points_apart", [0.4, 0.5, 0.6, 0.7, 0.8]],
    ["five_20_points_apart", [0.1, 0.3, 0.5, 0.7, 0.9]],
  ] as const) {
    for (const n of EPISODES) figures.push(...tierFigures(`tiers.${label}.n_${n}.${AT_CELLS}`, { rates, n, ...CELL_MODEL }, seed++, true));
  }
  for (const cells of [3, 4, 8]) {
    for (const [n, icc] of [[100, 0.02], [200, 0.02], [200, 0.05], [200, 0.1]] as const) {
      const setting = { rates: [0.7, 0.5], n, cells, icc };
      const at = `tiers.two_clustered.0.7_vs_0.5.n_${n}.${cells}_cells.icc_${icc}`;
      figures.push(...tierFigures(at, setting, seed, true));
      figures.push(...tierFigures(`${at}.cells_ignored`, { ...setting, ignoreCells: true }, seed++, true));
    }
  }
  return figures;
}

function bradleyTerryFigures(): Figure[] {
  const figures: Figure[] = [];
  let seed = 300;
  const six = [-1, -0.5, 0, 0.3, 0.7, 1.2];
  const ring = Array.from({ length: 10 }, (_, i) => [i, (i + 1) % 10] as const).concat(Array.from({ length: 5 }, (_, i) => [i, i + 5] as const));
  const settings: Array<[string, BradleyTerrySetting]> = [
    ...[10, 40, 160].map((episodes): [string, BradleyTerrySetting] => [`six_round_robin.episodes_${episodes}.ties_0.5`, { strengths: six, episodesPerPair: episodes, tieRate: 0.5 }]),
    ["six_round_robin.episodes_40.ties_0.8", { strengths: six, episodesPerPair: 40, tieRate: 0.8 }],
    // About two decisive episodes per pair: many policies win or lose all of theirs.
    ["six_wide_spread.episodes_4.ties_0.5", { strengths: [-3, -1.5, -0.5, 0.5, 1.5, 3], episodesPerPair: 4, tieRate: 0.5 }],
    ["six_wide_spread.episodes_40.ties_0.5", { strengths: [-3, -1.5, -0.5, 0.5, 1.5, 3], episodesPerPair: 40, tieRate: 0.5 }],
    ["ten_sparse_ring_and_chords.episodes_40.ties_0.5", { strengths: Array.from({ length: 10 }, (_, i) => -1.5 + i / 3), episodesPerPair: 40, tieRate: 0.5, pairs: ring }],
  ];
  for (const [label, setting] of settings) {
    const result = simulateBradleyTerryCoverage(setting, REPLICATIONS, seed++);
    figures.push(figure(`bradley_terry.${label}.coverage`, result.coverage));
    figures.push(figure(`bradley_terry.${label}.mean_width`, result.meanWidth, "log_odds"));
    figures.push(figure(`bradley_terry.${label}.strongest_bias`, result.strongestBias, "log_odds"));
    figures.push(figure(`bradley_terry.${label}.rmse`, result.rmse, "log_odds"));
  }
  figures.push(figure("bradley_terry.nominal", 0.95));
  figures.push(figure("bradley_terry.replications", REPLICATIONS, "runs"));
  return figures;
}

function timingFigures(): Figure[] {
  const random = mulberry32(400);
  const entries = Array.from({ length: 200 }, (_, i) => {
    const n = 200 + Math.floor(random() * 800);
    const p = 0.05 + 0.9 * random();
    let k = 0;
    for (let e = 0; e < n; e++) if (random() < p) k++;
    // Spread over 4 cells, as a board's entries are.
    const quarter = Math.floor(n / 4);
    const clusters = [0, 1, 2, 3].map((c) => ({ k: Math.floor(k / 4) + (c < k % 4 ? 1 : 0), n: quarter + (c < n % 4 ? 1 : 0) }));
    return { id: `p${i}`, k, n, clusters };
  });
  const comparisons: PairwiseComparison[] = [];
  for (let i = 0; i < 200; i++) {
    for (let j = i + 1; j < 200; j++) {
      if (random() > 0.1) continue;
      const win = 1 / (1 + Math.exp((j - i) / 50));
      let winsA = 0;
      let winsB = 0;
      for (let e = 0; e < 10; e++) (random() < win ? winsA++ : winsB++);
      comparisons.push({ a: `p${i}`, b: `p${j}`, winsA, winsB, ties: 10 });
    }
  }
  const median = (run: () => void) => {
    const times: number[] = [];
    for (let i = 0; i < 7; i++) {
      const start = performance.now();
      run();
      times.push(performance.now() - start);
    }
    return times.sort((a, b) => a - b)[3];
  };
  return [
    figure("timing.rank_entries.200_entries.4_cells", median(() => rankEntries(entries)), "ms"),
    figure("timing.fit_bradley_terry.200_policies_10pct_pairs", median(() => fitBradleyTerry(comparisons)), "ms"),
  ];
}

export async function run(): Promise<Figure[]> {
  const figures = [...nullFigures(), ...powerFigures(), ...bradleyTerryFigures(), ...timingFigures()];
  figures.push(figure("tiers.alpha", 0.05));
  figures.push(figure("tiers.boards_per_figure", BOARDS, "runs"));
  figures.push(figure("tiers.family_wise_error_mc_se", Math.sqrt((0.05 * 0.95) / BOARDS)));
  return figures;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2]) BOARDS = Number(process.argv[2]);
  for (const f of await run()) console.log(JSON.stringify(f));
}
