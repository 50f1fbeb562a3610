/**
 * Seeded Monte Carlo of the sequential procedures: the evidence behind the error rates that
 * docs/statistics.md states, shared by the unit tests (small) and scripts/bench (large).
 */

import type { ThresholdProcedure } from "./sequential-threshold.js";
import type { CompareDecision, SequentialCompare } from "./sequential-compare.js";

import { mulberry32, type Uniform } from "../../protocol/prng.js";

export { mulberry32, type Uniform };

/** Outcome frequencies of a threshold procedure over many synthetic runs. */
export interface ThresholdSimulation {
  runs: number;
  passRate: number;
  meanEpisodes: number;
}

/** Runs `runs` synthetic runs at true success rate `p`, each to a decision. */
export function simulateThreshold(create: () => ThresholdProcedure, p: number, runs: number, seed: number): ThresholdSimulation {
  const random = mulberry32(seed);
  let passes = 0;
  let episodes = 0;
  for (let r = 0; r < runs; r++) {
    const procedure = create();
    let decision = "continue";
    while (decision === "continue") {
      decision = procedure.update(random() < p);
      episodes++;
    }
    if (decision === "pass") passes++;
  }
  return { runs, passRate: passes / runs, meanEpisodes: episodes / runs };
}

/** Outcome frequencies of a sequential paired comparison over many synthetic runs. */
export interface CompareSimulation {
  runs: number;
  rates: Record<Exclude<CompareDecision, "continue">, number>;
  meanPairs: number;
}

/**
 * Runs `runs` synthetic paired comparisons. Each pair is discordant with probability `discordant`;
 * a discordant pair goes to A with probability `shareA` (0.5 = no difference).
 */
export function simulateCompare(
  create: () => SequentialCompare,
  discordant: number,
  shareA: number,
  runs: number,
  seed: number,
): CompareSimulation {
  const random = mulberry32(seed);
  const counts = { a_better: 0, b_better: 0, no_difference: 0 };
  let pairs = 0;
  for (let r = 0; r < runs; r++) {
    const compare = create();
    let decision: CompareDecision = "continue";
    while (decision === "continue") {
      let a: boolean;
      let b: boolean;
      if (random() < discordant) {
        a = random() < shareA;
        b = !a;
      } else {
        a = b = random() < 0.5;
      }
      decision = compare.update({ a, b });
      pairs++;
    }
    counts[decision]++;
  }
  return {
    runs,
    rates: { a_better: counts.a_better / runs, b_better: counts.b_better / runs, no_difference: counts.no_difference / runs },
    meanPairs: pairs / runs,
  };
}
