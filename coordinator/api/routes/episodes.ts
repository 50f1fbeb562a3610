/**
 * GET /v1/runs/{run_id}/episodes: finished episodes (those with an outcome; filtered by outcome,
 * failure cluster and the last stage reached), or with
 * `artifact=<kind>` the run's artifact files of that kind (what Result.artifacts URLs point to).
 *
 * The episodes are read, viewed and written a page at a time (EPISODES_PER_PAGE, keyset by index), with a turn
 * of the event loop between the steps of each page, so no run is too large to list without holding up other
 * requests: a 10,000-episode listing is 12 MB of JSON, which read and built in one piece held the loop for
 * 1.2-1.4 s of CPU (at load 5 on 2 cores; `npm run bench -- listing`). A list that fits
 * one page is sent whole by `res.json` (with its ETag, so a conditional GET still gets 304); a longer one is
 * streamed, byte for byte the same text, without an ETag (http/json-list-stream.ts).
 */
import { Router } from "express";
import { nextTurn } from "../../async/next-turn.js";
import { authOf } from "../../auth/authenticate.js";
import { writeJsonList } from "../../http/json-list-stream.js";
import { kindModule } from "../../kinds/registry.js";
import { artifactView, episodeView } from "../../lifecycle/run-view.js";
import { lastStageOf } from "../../runs/stage-funnel.js";
import type { ArtifactRow } from "../../store/artifacts-repo.js";
import type { Db } from "../../store/database.js";
import { listArtifactsOfEpisodes, listDoneEpisodesPage } from "../../store/done-episodes-repo.js";
import type { RunRecord } from "../../store/runs-repo.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { EpisodeListQuery } from "../schemas/runs.js";
import { parseQuery } from "../validate-request.js";
import { requireRun } from "./runs.js";

/**
 * Episodes read, viewed and written per page (three turns of the event loop: the episodes' read, their artifacts'
 * read, the views). 100 rather than 250: a 10,000-episode listing served as fast (best 450-500 ms against 507-712
 * ms, load 6 on 2 cores) and its longest turn was shorter (7-19 ms of CPU warm against 42-71 ms).
 */
export const EPISODES_PER_PAGE = 100;

export function episodesRouter(deps: CompiledApiDeps, router: Router = Router()): Router {

  router.get("/runs/:runId/episodes", async (req, res) => {
    const run = await requireRun(deps.db, authOf(res).accountId, req.params.runId);
    const query = parseQuery(EpisodeListQuery, req);
    const url = `/v1/runs/${run.id}/episodes`;
    const reader = episodeListReader(deps.db, run, query, deps.urls);
    const first = await reader.read(-1);
    if (!first.more) {
      res.json({ object: "list", url, data: first.items });
      return;
    }
    await writeJsonList(req, res, { object: "list", url }, reader.pagesFrom(first), deps.log);
  });

  return router;
}

/** One page of a listing: its items (views), the last episode index read, and whether more episodes follow. */
export interface ListingPage {
  items: Array<Record<string, unknown>>;
  lastIdx: number;
  more: boolean;
}

export interface EpisodeListReader {
  /** The page after episode index `afterIdx` (-1: the first). */
  read(afterIdx: number): Promise<ListingPage>;
  /** `first`'s items, then every following page's, each read when the consumer asks for it. */
  pagesFrom(first: ListingPage): AsyncGenerator<ListingPage["items"]>;
}

/**
 * Reads GET /v1/runs/{run_id}/episodes' list a page at a time (`pageSize` episodes, default EPISODES_PER_PAGE):
 * Episode views, or with `query.artifact` the artifact views of that kind, in episode index order.
 */
export function episodeListReader(
  db: Db, run: Pick<RunRecord, "id" | "kind">, query: { outcome?: string; cluster?: string; stage?: string; artifact?: string },
  urls: { artifactUrl: string; baseUrl: string }, pageSize = EPISODES_PER_PAGE,
): EpisodeListReader {
  const { outcome, cluster, stage, artifact } = query;
  const withUnit = kindModule(run.kind).traits.hasUnits;
  const read = async (afterIdx: number): Promise<ListingPage> => {
    // One row past the page says whether another page follows (and a run of one page is sent whole).
    const rows = await listDoneEpisodesPage(db, run.id, { outcome, cluster }, afterIdx, pageSize + 1);
    const more = rows.length > pageSize;
    if (more) rows.length = pageSize;
    const lastIdx = rows.length > 0 ? rows[rows.length - 1].idx : afterIdx;
    const episodes = stage === undefined ? rows : rows.filter((e) => (lastStageOf(e.evaluation) ?? "none") === stage);
    // A page's reads and its views take a turn of the event loop each (each about 1-2 ms of 100 episodes on SQLite,
    // where a read runs synchronously), so no step of a listing holds the loop for long.
    await nextTurn();
    const artifacts = await listArtifactsOfEpisodes(db, episodes.map((e) => e.id), artifact);
    await nextTurn();
    // Each view is given its episode's rows only (with every row, each view would search them all).
    const artifactsOf = new Map<string, ArtifactRow[]>();
    for (const a of artifacts) {
      const list = artifactsOf.get(a.episode_id);
      if (list) list.push(a);
      else artifactsOf.set(a.episode_id, [a]);
    }
    const items = artifact !== undefined
      ? episodes.flatMap((e) => (artifactsOf.get(e.id) ?? []).map((a) => artifactView(a, e.idx, urls.artifactUrl)))
      : episodes.map((e) => episodeView(e, artifactsOf.get(e.id) ?? [], urls.artifactUrl, withUnit, urls.baseUrl));
    return { items, lastIdx, more };
  };
  return {
    read,
    async *pagesFrom(first) {
      let page = first;
      yield page.items;
      while (page.more) {
        page = await read(page.lastIdx);
        yield page.items;
      }
    },
  };
}
