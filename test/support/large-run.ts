/**
 * A run of many finished episodes, written straight into the store through its repositories, 500 episodes
 * per transaction (10,000 episodes with 4 artifacts each: a few seconds on SQLite), and the listing
 * GET /v1/runs/{run_id}/episodes answered for it when it was built in one piece (`wholeEpisodeList`), to
 * compare a paged answer with.
 *
 * The episodes vary in what their views show: outcome, failure cluster (a legacy name among them), the last
 * stage reached, a person's label, interventions, the primary and a second camera's video, a pending upload.
 */
import { artifactView, episodeView } from "../../coordinator/lifecycle/run-view.js";
import { kindModule } from "../../coordinator/kinds/registry.js";
import type { RunKindName } from "../../coordinator/domain/run-kinds.js";
import { lastStageOf } from "../../coordinator/runs/stage-funnel.js";
import { DEFAULT_ACCOUNT_ID } from "../../coordinator/store/accounts-repo.js";
import { insertPendingArtifact, listArtifacts, upsertStoredArtifact } from "../../coordinator/store/artifacts-repo.js";
import type { Db } from "../../coordinator/store/database.js";
import { listEpisodes } from "../../coordinator/store/done-episodes-repo.js";
import { markEpisodeDone } from "../../coordinator/store/episodes-repo.js";
import { backfillEpisodes, episodeId, insertRun, setRunStatus } from "../../coordinator/store/runs-repo.js";
import { transact } from "../../coordinator/store/tx.js";

const CLUSTERS = ["missed_grasp", "drop", "dropped", "timeout_after_grasp", "collision"];
const STAGES = ["reach", "grasp", "lift"];

/** Inserts run `runId` (kind `run`, completed) with `episodes` finished episodes; every 97th is left pending (not listed). */
export async function seedLargeRun(db: Db, runId: string, episodes: number, accountId = DEFAULT_ACCOUNT_ID): Promise<void> {
  // Now, not a fixed time: a coordinator halts a run queued longer than its queue window (queue_timeout).
  const now = new Date().toISOString();
  await insertRun(db, {
    id: runId, accountId, kind: "run", created: now,
    request: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube", episodes, policy: { type: "container", image: "lab/policy:1" } },
    resolvedPins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
    plan: { model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 5, control_rate_hz: 30, max_duration_s: 20 },
    priority: "standard", episodesTotal: episodes,
  });
  while (await backfillEpisodes(db, runId));
  for (let from = 0; from < episodes; from += 500) {
    await transact(db, async (tx) => {
      for (let i = from; i < Math.min(episodes, from + 500); i++) {
        if (i % 97 === 96) continue;
        const id = episodeId(runId, i);
        const failed = i % 3 === 0;
        const reached = i % STAGES.length;
        const meta = i % 11 === 0 ? { interventions: [{ t_s: 1.5, kind: "nudge", detail: `episode ${i}` }] } : { cameras: ["top", "wrist"] };
        await markEpisodeDone(tx, id, {
          cellId: `so101-${"bc"[i % 2]}`, outcome: failed ? "failure" : "success", failureCluster: failed ? (i % 999 === 0 ? "safety_limit" : CLUSTERS[i % CLUSTERS.length]) : null,
          durationS: 3 + (i % 17) / 10, resetS: 1, replaySpecJson: JSON.stringify({ environment: "tabletop@1", layout_seed: i, lighting: "day", distractors: [], objects: { cube: [0.2, 0, 0.015] } }),
          metaJson: JSON.stringify(meta), evaluationJson: i % 7 === 0 ? null : JSON.stringify({ stages: Object.fromEntries(STAGES.map((s, k) => [s, k <= reached])) }),
          finishedAt: now, ...(i % 13 === 0 ? { label: { progress: 40, note: "slid", waitedS: 4 } } : {}),
        });
        const file = (kind: string, name: string) => ({ episodeId: id, runId, kind, fileName: name, bytes: 1000 + i, sha256: "ab".repeat(32), storedAt: now });
        await upsertStoredArtifact(tx, file("mcap", `${id}.mcap`));
        await upsertStoredArtifact(tx, file("video", `${id}-top.mp4`));
        await upsertStoredArtifact(tx, file("video:wrist", `${id}-wrist.mp4`));
        if (i % 5 === 0) await insertPendingArtifact(tx, file("ground_truth", `${id}-ground-truth.json`));
        else await upsertStoredArtifact(tx, file("ground_truth", `${id}-ground-truth.json`));
      }
    });
    // A turn of the event loop between transactions: on SQLite each one runs synchronously, and a coordinator in
    // this process must keep its timers (keep-alive sockets closed on time, not as the next request arrives).
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  for (const status of ["scheduling", "running", "completed"] as const) await setRunStatus(db, runId, status);
}

/** The query of GET /v1/runs/{run_id}/episodes. */
export interface EpisodeListQuery {
  outcome?: string;
  cluster?: string;
  stage?: string;
  artifact?: string;
}

/**
 * The listing as the route built it in one piece before it was paged (whole-run reads, every view, one object),
 * for run `runId` of kind `kind`.
 */
export async function wholeEpisodeList(db: Db, run: { id: string; kind: RunKindName }, query: EpisodeListQuery, urls: { artifactUrl: string; baseUrl: string }): Promise<unknown> {
  const url = `/v1/runs/${run.id}/episodes`;
  const episodes = (await listEpisodes(db, run.id, { outcome: query.outcome, cluster: query.cluster }))
    .filter((e) => e.outcome !== null && (query.stage === undefined || (lastStageOf(e.evaluation) ?? "none") === query.stage));
  const artifacts = await listArtifacts(db, run.id);
  if (query.artifact) {
    const indexOf = new Map(episodes.map((e) => [e.id, e.idx]));
    const data = artifacts.filter((a) => a.kind === query.artifact && indexOf.has(a.episode_id)).map((a) => artifactView(a, indexOf.get(a.episode_id)!, urls.artifactUrl));
    return { object: "list", url, data };
  }
  const artifactsOf = new Map<string, typeof artifacts>();
  for (const a of artifacts) artifactsOf.set(a.episode_id, [...(artifactsOf.get(a.episode_id) ?? []), a]);
  const withUnit = kindModule(run.kind).traits.hasUnits;
  return { object: "list", url, data: episodes.map((e) => episodeView(e, artifactsOf.get(e.id) ?? [], urls.artifactUrl, withUnit, urls.baseUrl)) };
}
