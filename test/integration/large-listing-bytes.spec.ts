/**
 * GET /v1/runs/{run_id}/episodes of a 10,000-episode run (4 artifact rows each) against a real coordinator over
 * real HTTP (loopback, no cells): the paged, streamed answer is byte for byte the JSON the route built in one
 * piece before (filters and the artifact form included), a list of one page keeps its ETag and 304, and a new
 * event subscriber gets the run's whole history. No time bounds here, so it runs in a share; the event loop's
 * bounds while the list streams are large-listing.spec.ts's (alone, in SOLO_FILES).
 * ASSAY_TEST_DATABASE=postgres runs it on PostgreSQL.
 */
import assert from "node:assert/strict";
import { EPISODES_PER_PAGE } from "../../coordinator/api/routes/episodes.js";
import { seedLargeRun, wholeEpisodeList, type EpisodeListQuery } from "../support/large-run.js";
import { firstDifference, rawGet, textOf } from "../support/raw-get.js";
import { startTestService, TEST_ADMIN_KEY, type TestService } from "./helpers.js";

const EPISODES = 10_000;
const LARGE = "run_LargeListing000000001";
const SMALL = "run_SmallListing000000001";

describe("listing the episodes of a 10,000-episode run: byte for byte the list built in one piece, ETags, history (loopback)", function () {
  this.timeout(600_000);
  let service: TestService;

  const query = (q: EpisodeListQuery) => new URLSearchParams(Object.entries(q).filter(([, v]) => v !== undefined) as Array<[string, string]>).toString();
  const expectedText = async (runId: string, q: EpisodeListQuery) => JSON.stringify(await wholeEpisodeList(service.coordinator.db, { id: runId, kind: "run" }, q, {
    baseUrl: service.coordinator.baseUrl, artifactUrl: `${service.coordinator.baseUrl}/artifacts`,
  }));
  const httpGet = (path: string, headers: Record<string, string> = {}) =>
    rawGet(new URL(path, service.coordinator.baseUrl), { authorization: `Bearer ${TEST_ADMIN_KEY}`, ...headers });

  before(async () => {
    service = await startTestService({ rateLimits: { general: { perS: 100_000, burst: 100_000 }, submit: { perS: 100_000, burst: 100_000 } } });
    await seedLargeRun(service.coordinator.db, LARGE, EPISODES);
    await seedLargeRun(service.coordinator.db, SMALL, 40);
  });
  after(async () => {
    await service?.stop();
  });

  it("answers byte for byte the JSON of the whole list, for every filter and artifact kind, streamed without an ETag", async () => {
    const queries: EpisodeListQuery[] = [
      {}, { outcome: "failure" }, { cluster: "dropped" }, { cluster: "drop", outcome: "failure" }, { stage: "grasp" }, { stage: "none" }, { outcome: "success", stage: "lift" },
      { artifact: "mcap" }, { artifact: "video:wrist" }, { artifact: "ground_truth", outcome: "failure" }, { artifact: "video", stage: "reach" },
    ];
    for (const q of queries) {
      const res = await httpGet(`/v1/runs/${LARGE}/episodes?${query(q)}`);
      const text = await textOf(res.body);
      assert.equal(res.status, 200, text.slice(0, 300));
      assert.equal(res.headers["content-type"], "application/json; charset=utf-8");
      const want = await expectedText(LARGE, q);
      assert.ok(text === want, `?${query(q)}: ${firstDifference(text, want)}`);
      // Every query here lists more than one page (EPISODES_PER_PAGE), so each is streamed: no tag, no length.
      assert.equal(res.headers.etag, undefined, `?${query(q)}`);
      assert.equal(res.headers["content-length"], undefined, `?${query(q)}`);
      assert.equal(res.headers["transfer-encoding"], "chunked", `?${query(q)}`);
      assert.ok((JSON.parse(text) as { data: unknown[] }).data.length > EPISODES_PER_PAGE, `?${query(q)} lists more than a page`);
    }
    // The first list is the whole run less the episodes left pending.
    assert.equal((JSON.parse(await expectedText(LARGE, {})) as { data: unknown[] }).data.length, EPISODES - Math.floor(EPISODES / 97));
  });

  it("sends a list of one page whole, with its ETag, and answers a conditional GET with 304", async () => {
    for (const [runId, q] of [[SMALL, {}], [SMALL, { artifact: "mcap" }], [LARGE, { outcome: "failure", cluster: "safety_limit" }]] as const) {
      const path = `/v1/runs/${runId}/episodes?${query(q)}`;
      const res = await httpGet(path);
      const text = await textOf(res.body);
      assert.equal(text, await expectedText(runId, q));
      const etag = res.headers.etag as string | undefined;
      assert.match(etag ?? "", /^W\/"[0-9a-f]+-/, path);
      assert.equal(res.headers["content-length"], String(Buffer.byteLength(text)));
      const again = await httpGet(path, { "if-none-match": etag! });
      assert.equal(again.status, 304, path);
      for await (const chunk of again.body) assert.fail(`a 304 has no body; got ${chunk.length} bytes`);
    }
    const none = await httpGet(`/v1/runs/${LARGE}/episodes?stage=nowhere`);
    assert.deepEqual(JSON.parse(await textOf(none.body)), { object: "list", url: `/v1/runs/${LARGE}/episodes`, data: [] });
  });

  it("replays the history of the 10,000-episode run to a new event subscriber a page at a time: each finished episode once, in order", async () => {
    const res = await httpGet(`/v1/runs/${LARGE}/events`);
    assert.equal(res.status, 200);
    // The run is completed: the stream ends after its history.
    const events = (await textOf(res.body)).split("\n\n").filter((block) => block.startsWith("event: "));
    assert.equal(events[0].split("\n")[0], "event: status");
    const episodes = events.slice(1).map((block) => JSON.parse(block.split("\n")[1].slice("data: ".length)) as { episode: number; of: number; outcome: string });
    const listed = (JSON.parse(await expectedText(LARGE, {})) as { data: Array<{ index: number; outcome: string }> }).data;
    assert.deepEqual(episodes.map((e) => [e.episode, e.outcome]), listed.map((e) => [e.index + 1, e.outcome]));
    assert.ok(episodes.every((e) => e.of === EPISODES));
  });
});
