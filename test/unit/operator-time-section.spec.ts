/** The report's operator_time (coordinator/reports/operator-time-section.ts): resets and labels, totals, means, per counted episode. */
import assert from "node:assert/strict";
import { operatorTimeSection, operatorTimeText } from "../../coordinator/reports/operator-time-section.js";
import type { EpisodeRecord } from "../../coordinator/store/episodes-repo.js";

const episode = (e: Partial<EpisodeRecord>): EpisodeRecord => ({ status: "done", operatorResetS: null, label: null, interruptions: [], ...e }) as EpisodeRecord;

describe("report operator_time", () => {
  it("is absent when no person set a scene or judged an episode", () => {
    assert.equal(operatorTimeSection([episode({}), episode({ status: "pending" })]), undefined);
  });

  it("counts every reset a person set (interrupted attempts too) and every label asked for, per counted episode", () => {
    const section = operatorTimeSection([
      episode({ operatorResetS: 30, label: { judgedBy: "human", progress: 80, note: null, waitedS: 10 } }),
      episode({ operatorResetS: 50, interruptions: [{ operator_reset_s: 40 } as EpisodeRecord["interruptions"][number]], label: { judgedBy: "human", progress: 20, note: null, waitedS: 20 } }),
      // Unlabelled: the person was asked and never answered; the cell's wait counts, the episode is not in n.
      episode({ status: "unlabelled", operatorResetS: 20, label: { judgedBy: null, progress: null, note: null, waitedS: 600 } }),
    ]);
    assert.deepEqual(section, {
      episodes: 2,
      reset: { count: 4, s_total: 140, s_mean: 35, s_per_episode: 70 },
      label: { count: 3, s_total: 630, s_mean: 210, s_per_episode: 315 },
      s_total: 770,
      s_per_episode: 385,
    });
    assert.deepEqual(operatorTimeText(section!), [
      "Resets set by a person: 4, 140 s in all, 35 s each on average, 70 s per counted episode.",
      "Episodes judged by a person: 3, 630 s in all, 210 s each on average, 315 s per counted episode.",
      "Together: 770 s of a person's time, 385 s per episode counted in n (2).",
    ]);
  });
});
