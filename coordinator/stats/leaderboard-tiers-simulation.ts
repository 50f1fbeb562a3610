/**
 * Seeded Monte Carlo of the leaderboard tier rule (leaderboard-tiers.ts): its family-wise error and
 * its power. Shared by the unit tests (small) and scripts/bench/leaderboard-tiers.ts (large).
 */

import { rankEntries, type LeaderboardEntry, type PosteriorCache } from "./leaderboard-tiers.js";
import { binomialSample, cellRateSample, mulberry32 } from "./simulation.js";

/** A board to simulate: one true rate per entry, all with the same number of episodes. */
export interface TierSetting {
  rates: readonly number[];
  n: number;
  /** Cells each entry's episodes are split over (as evenly as integers allow); none by default. */
  cells?: number;
  /** Intra-cell correlation of the cells' rates around the entry's rate (Beta). Default 0. */
  icc?: number;
  /** Rank the entries without their cells, as if the episodes were independent. Default false. */
  ignoreCells?: boolean;
  alpha?: number;
}

/** Frequencies over simulated boards. */
export interface TierSimulation {
  boards: number;
  /** Share of boards with some pair in different tiers whose true rates are equal or reversed. */
  familyWiseError: number;
  /** Share of boards on which every pair with different true rates is in different tiers. */
  allSeparated: number;
  /** Share of pairs with different true rates placed in different tiers (averaged over boards). */
  separatedPairs: number;
  meanTiers: number;
}

function drawEntry(random: () => number, id: string, rate: number, setting: TierSetting): LeaderboardEntry {
  const { n, cells, icc = 0 } = setting;
  if (!cells) return { id, k: binomialSample(random, n, rate), n };
  const clusters = Array.from({ length: cells }, (_, c) => {
    const size = Math.floor(n / cells) + (c < n % cells ? 1 : 0);
    return { k: binomialSample(random, size, cellRateSample(random, rate, icc)), n: size };
  });
  const k = clusters.reduce((sum, c) => sum + c.k, 0);
  return setting.ignoreCells ? { id, k, n } : { id, k, n, clusters };
}

/** Draws `boards` boards of `setting` and tiers each with {@link rankEntries}. */
export function simulateTiers(setting: TierSetting, boards: number, seed: number): TierSimulation {
  const random = mulberry32(seed);
  const { rates } = setting;
  // Boards repeat the same few counts (k of n, or per-cell counts): each posterior is computed once.
  const posteriors: PosteriorCache = new Map();
  let errors = 0;
  let allSeparated = 0;
  let separatedShare = 0;
  let tiers = 0;
  let differentPairs = 0;
  for (let i = 0; i < rates.length; i++) for (let j = i + 1; j < rates.length; j++) if (rates[i] !== rates[j]) differentPairs++;
  for (let board = 0; board < boards; board++) {
    const entries = rates.map((rate, i) => drawEntry(random, `e${i}`, rate, setting));
    const ranking = rankEntries(entries, { alpha: setting.alpha, posteriors });
    const tierOf = new Map(ranking.entries.map((e) => [e.id, e.tier]));
    let error = false;
    let separated = 0;
    for (let i = 0; i < rates.length; i++) {
      for (let j = 0; j < rates.length; j++) {
        const [ti, tj] = [tierOf.get(`e${i}`)!, tierOf.get(`e${j}`)!];
        // i placed in a better tier than j: a claim that i's rate is higher.
        if (ti < tj) {
          if (rates[i] <= rates[j]) error = true;
          else separated++;
        }
      }
    }
    if (error) errors++;
    if (differentPairs > 0 && separated === differentPairs) allSeparated++;
    separatedShare += differentPairs > 0 ? separated / differentPairs : 0;
    tiers += ranking.tiers;
  }
  return {
    boards,
    familyWiseError: errors / boards,
    allSeparated: allSeparated / boards,
    separatedPairs: separatedShare / boards,
    meanTiers: tiers / boards,
  };
}
