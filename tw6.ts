import { rankEntries } from "./coordinator/stats/leaderboard-tiers.js";
import { binomialSample, cellRateSample, mulberry32 } from "./coordinator/stats/simulation.js";
const settings: Array<[number, number, number, number]> = [[3,0.1,0.7,200],[4,0.1,0.7,200],[4,0.1,0.5,200],[3,0.1,0.5,200],[4,0.1,0.7,60],[3,0.05,0.7,200]];
for (const [cells, icc, p, n] of settings) {
  const random = mulberry32(1000 + cells * 10 + Math.round(icc*100) + n);
  const tails: number[] = [];
  for (let r = 0; r < 700; r++) {
    const draw = (id: string) => { const cl = Array.from({length: cells}, (_, c) => { const size = Math.floor(n/cells) + (c < n % cells ? 1 : 0); return { k: binomialSample(random, size, cellRateSample(random, p, icc)), n: size }; });
      return { id, k: cl.reduce((s,c)=>s+c.k,0), n, clusters: cl }; };
    const b = rankEntries([draw("a"), draw("b")]).boundaries[0];
    tails.push(b.posterior_not_better);
  }
  tails.sort((x,y)=>x-y);
  const at = (c: number) => tails.filter((t) => t <= c).length / tails.length;
  console.log(JSON.stringify({cells, icc, p, n, fwe_025: at(0.025), fwe_015: at(0.015), fwe_0125: at(0.0125), fwe_01: at(0.01), q05: tails[Math.floor(0.05*tails.length)]}));
}
