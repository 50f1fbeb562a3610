import { simulateTiers } from "./coordinator/stats/leaderboard-tiers-simulation.js";
const t=performance.now();
for (const [rates, cells, icc] of [[[0.7,0.7],3,0.1],[[0.7,0.7],4,0.1],[[0.5,0.5],3,0.05],[[0.7,0.5],3,0.05],[[0.7,0.5],4,0.1]] as const) {
  const r = simulateTiers({ rates, n: 200, cells, icc }, 600, 42);
  console.log(JSON.stringify({rates,cells,icc, fwe:r.familyWiseError, power:r.allSeparated}), ((performance.now()-t)/1000).toFixed(1));
}
