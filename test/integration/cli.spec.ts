/**
 * The `assay` command line (cli/) against a real coordinator and simulated cells, each invocation its
 * own process through bin/assay.mjs: under a pseudo-terminal (node-pty) where people see progress
 * bars, and with pipes where scripts read --json and exit codes. Covers every exit code (0 success,
 * 1 a run stopped while watched, 2 usage errors, 3 API errors and an unreachable API), downloads
 * checked by their bytes (MCAP magic, %PDF, the export's sha256), and a watch whose event stream is
 * cut mid-run and resumed without counting an episode twice.
 */
import { freePort } from "../support/free-port.js";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { wilsonInterval } from "../../coordinator/stats/wilson.js";
import { README_RUN_BODY } from "../fixtures.js";
import { runCliInPty, runCliPiped, startCliInPty } from "../support/cli-process.js";
import { useSharedFleet } from "../support/shared-fleet.js";
import { startStreamCuttingProxy } from "../support/stream-cutting-proxy.js";
import { runEnd, TEST_ADMIN_KEY, type TestService } from "./helpers.js";

type Json = Record<string, any>;

const MCAP_MAGIC = Buffer.from([0x89, 0x4d, 0x43, 0x41, 0x50, 0x30, 0x0d, 0x0a]); // \x89MCAP0\r\n
const EPISODES = 3;
/** The README body with fewer episodes and a fixed seed (the same initial conditions on every test run). */
const BODY = { ...README_RUN_BODY, episodes: EPISODES, perturbation: { seed: 20261122 } };

/**
 * The watch's last progress, `<done>/<total> episodes` with successes, failures and the rate so far,
 * checked against the run's result and an independent Wilson interval (coordinator/stats).
 */
function assertFinalProgress(text: string, pattern: RegExp, run: Json): void {
  const found = pattern.exec(text);
  assert.ok(found?.groups, `no final progress matching ${pattern} in:\n${text}`);
  const { done, total, ok, failed, rate, lo, hi } = found.groups;
  assert.equal(Number(done), EPISODES);
  assert.equal(Number(total), EPISODES);
  assert.equal(Number(ok) + Number(failed), EPISODES);
  assert.equal(Number(ok), Math.round(run.result.success_rate * run.result.n), "successes agree with the run's result");
  assert.equal(rate, (Number(ok) / EPISODES).toFixed(2));
  assert.deepEqual([lo, hi], wilsonInterval(Number(ok), EPISODES, 0.95).map((x) => x.toFixed(2)));
}

const PROGRESS = String.raw`(?<done>\d+)/(?<total>\d+) episodes`;
const RATE = String.raw`(?<rate>[\d.]+) \[(?<lo>[\d.]+), (?<hi>[\d.]+)\]`;


describe("the assay command line (simulated fleet)", function () {
  this.timeout(300_000);
  let service: TestService;
  let dir: string;
  let env: Record<string, string>;
  /** The run `runs submit --watch` completed; later tests read its episodes, report and export. */
  let completedRunId: string;

  useSharedFleet(["so101-b", "so101-c"], (shared) => (service = shared));

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "assay-cli-"));
    env = { ASSAY_API_KEY: TEST_ADMIN_KEY, ASSAY_BASE_URL: service.coordinator.baseUrl };
    writeFileSync(join(dir, "body.json"), JSON.stringify(BODY, null, 2));
  });

  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const apiJson = async (path: string): Promise<Json> => {
    const res = await service.api(path);
    assert.equal(res.status, 200, path);
    return (await res.json()) as Json;
  };

  it("runs submit --watch: a progress bar that reaches the total, the final result, exit 0", async () => {
    const { code, output, raw } = await runCliInPty(["runs", "submit", "body.json", "--watch"], env, dir);
    assert.equal(code, 0, output);
    const id = /submitted (run_\w+)/.exec(output)?.[1];
    assert.ok(id, output);
    completedRunId = id;
    // cli-progress drew a bar on the terminal (cursor hidden, the block characters), ending at N/N.
    assert.ok(raw.includes("\x1b[?25l"), "the cursor was hidden for the bar");
    const run = await apiJson(`/v1/runs/${id}`);
    assert.equal(run.status, "completed");
    assertFinalProgress(output, new RegExp(`█+ ${PROGRESS} \\| (?<ok>\\d+) ok, (?<failed>\\d+) failed \\| rate ${RATE} \\| completed`), run);
    assert.doesNotMatch(output, new RegExp(`${EPISODES + 1}/${EPISODES} episodes`));
    assert.ok(output.includes(`${id} completed: n ${EPISODES}, success rate ${run.result.success_rate.toFixed(2)}`), output);
    assert.ok(output.includes(`(${run.result.interval_method}, 95%)`), output);
    // Then the headline in words, the sentences the console and the PDF report show.
    assert.ok(run.result.cells.statement.length >= 3);
    for (const line of run.result.cells.statement) assert.ok(output.includes(line), `${line}\nnot in:\n${output}`);
  });

  it("--json prints the API's JSON and nothing else: runs get, runs list, robots, episodes, quote, usage", async () => {
    const get = await runCliPiped(["runs", "get", completedRunId, "--json"], env, dir);
    assert.equal(get.code, 0, get.stderr);
    assert.deepEqual(JSON.parse(get.stdout), await apiJson(`/v1/runs/${completedRunId}`));

    const list = await runCliPiped(["--json", "runs", "list", "--limit", "1", "--status", "completed"], env, dir);
    assert.equal(list.code, 0, list.stderr);
    assert.deepEqual(JSON.parse(list.stdout), await apiJson("/v1/runs?limit=1&status=completed"));

    // duty_cycle_pct is live (it moves as cells work), so the two reads are compared without it.
    const withoutDuty = (list: Json) => list.data.map(({ duty_cycle_pct: _, ...robot }: Json) => robot);
    const robots = await runCliPiped(["robots", "--json"], env, dir);
    assert.deepEqual(withoutDuty(JSON.parse(robots.stdout)), withoutDuty(await apiJson("/v1/robots")));

    const episodes = await runCliPiped(["episodes", completedRunId, "--outcome", "success", "--json"], env, dir);
    assert.deepEqual(JSON.parse(episodes.stdout), await apiJson(`/v1/runs/${completedRunId}/episodes?outcome=success`));

    const quote = await runCliPiped(["quote", "body.json", "--json"], env, dir);
    assert.equal(quote.code, 0, quote.stderr);
    const priced = JSON.parse(quote.stdout) as Json;
    assert.equal(priced.object, "quote");
    assert.equal(priced.n, EPISODES);

    const usage = await runCliPiped(["usage", "--json"], env, dir);
    assert.equal(usage.code, 0, usage.stderr);
    // Usage moves whenever an attempt is metered, so only its shape is compared.
    const month = new Date().toISOString().slice(0, 7);
    const used = JSON.parse(usage.stdout) as Json;
    assert.deepEqual(Object.keys(used).sort(), Object.keys(await apiJson(`/v1/usage?period=${month}`)).sort());
    assert.equal(used.period, month);
  });

  it("human output: aligned tables and summaries", async () => {
    const robots = await runCliInPty(["robots"], env, dir);
    assert.equal(robots.code, 0, robots.output);
    assert.match(robots.output, /^ROBOT +CLASS +TIER +DOF +HANDS +FIRMWARE +CELLS +DUTY$/m);
    assert.match(robots.output, /^so101 +arm-pod +soak +6 /m);

    const episodes = await runCliInPty(["episodes", completedRunId], env, dir);
    assert.equal(episodes.code, 0, episodes.output);
    assert.match(episodes.output, /^INDEX +OUTCOME +CLUSTER +CELL +DURATION +ATTEMPTS$/m);
    assert.equal(episodes.output.match(/^ +\d+ +(success|failure) +\S+ +so101-[bc] +[\d.]+ s +\d+$/gm)?.length, EPISODES, episodes.output);

    const get = await runCliInPty(["runs", "get", completedRunId], env, dir);
    assert.match(get.output, /^status +completed$/m);
    assert.match(get.output, /^robot +so101@latest \(resolved so101@3\.11\)$/m);
    const completed = await apiJson(`/v1/runs/${completedRunId}`);
    for (const line of completed.result.cells.statement) assert.ok(get.output.includes(line), `${line}\nnot in:\n${get.output}`);
  });

  it("runs update names a run and sets metadata; runs list shows name, policy, n and rate with its interval, filtered by metadata, policy, task and robot", async () => {
    const tag = `cli-${Date.now()}`;
    const updated = await runCliPiped(["runs", "update", completedRunId, "--name", "CLI expert", "--metadata", `suite=${tag}`, "--metadata", "owner=ana"], env, dir);
    assert.equal(updated.code, 0, updated.stderr);
    assert.equal(updated.stdout.trim(), `${completedRunId}: name "CLI expert"; metadata suite=${tag}, owner=ana`);
    const got = await runCliPiped(["runs", "get", completedRunId], env, dir);
    assert.match(got.stdout, /^name +CLI expert$/m);
    assert.match(got.stdout, /^policy name +assay\/ref-policy:expert$/m);
    assert.match(got.stdout, new RegExp(`^metadata +suite=${tag}, owner=ana$`, "m"));

    const filters = ["--metadata", `suite=${tag}`, "--policy", "assay/ref-policy:expert", "--task", "pick-cube", "--robot", "so101", "--kind", "run"];
    const listed = await runCliInPty(["runs", "list", ...filters], env, dir);
    assert.equal(listed.code, 0, listed.output);
    assert.match(listed.output, /^RUN +NAME +POLICY +KIND +TASK +ROBOT +N +RATE \[95% CI\] +STATUS +CREATED$/m);
    const run = await apiJson(`/v1/runs/${completedRunId}`);
    const [lo, hi] = run.result.ci95.map((x: number) => x.toFixed(2));
    const row = new RegExp(`^${completedRunId} +CLI expert +assay/ref-policy:expert +run +pick-cube@v1 +so101@3\\.11 +${EPISODES} +${run.result.success_rate.toFixed(2)} \\[${lo}, ${hi}\\] +completed +\\d{4}-`, "m");
    assert.match(listed.output, row);
    assert.equal(listed.output.match(/^run_\w+ /gm)?.length, 1, "only the run with that metadata");
    const json = await runCliPiped(["--json", "runs", "list", ...filters], env, dir);
    assert.deepEqual(JSON.parse(json.stdout), await apiJson(`/v1/runs?metadata[suite]=${tag}&policy_name=assay/ref-policy:expert&task=pick-cube&robot=so101&kind=run`));
    const none = await runCliPiped(["runs", "list", "--metadata", `suite=${tag}`, "--policy", "someone-else"], env, dir);
    assert.equal(none.stdout.trim(), "no runs");

    const removed = await runCliPiped(["runs", "update", completedRunId, "--remove-name", "--metadata", "owner="], env, dir);
    assert.equal(removed.stdout.trim(), `${completedRunId}: name (none); metadata suite=${tag}`);
    const bad = await runCliPiped(["runs", "update", completedRunId, "--metadata", "a[1]=x"], env, dir);
    assert.equal(bad.code, 3, bad.stderr);
    assert.match(bad.stderr, /metadata key contains a square bracket/);
    const nothing = await runCliPiped(["runs", "update", completedRunId], env, dir);
    assert.equal(nothing.code, 2, nothing.stderr);
    const malformed = await runCliPiped(["runs", "list", "--metadata", "novalue"], env, dir);
    assert.equal(malformed.code, 2, malformed.stderr);

    // Submitted with labels (and cancelled at once: only the labels matter here).
    const submitted = await runCliPiped(["--json", "runs", "submit", "body.json", "--name", "labelled", "--metadata", `suite=${tag}-submit`], env, dir);
    assert.equal(submitted.code, 0, submitted.stderr);
    const created = JSON.parse(submitted.stdout) as Json;
    assert.equal(created.name, "labelled");
    assert.deepEqual(created.metadata, { suite: `${tag}-submit` });
    const cancelled = await service.api(`/v1/runs/${created.id}/cancel`, { method: "POST" });
    assert.equal(cancelled.status, 200);
  });

  it("episodes --download mcap writes one MCAP file per episode", async () => {
    const out = join(dir, "recordings");
    const { code, output } = await runCliInPty(["episodes", completedRunId, "--download", "mcap", "--out", out], env, dir);
    assert.equal(code, 0, output);
    const files = readdirSync(out).sort();
    assert.equal(files.length, EPISODES, output);
    for (const file of files) {
      assert.match(file, /^\d+-ep_\w+\.mcap$/);
      const bytes = readFileSync(join(out, file));
      assert.deepEqual(bytes.subarray(0, 8), MCAP_MAGIC, `${file} starts with the MCAP magic`);
      assert.ok(output.includes(`${join(out, file)}  `), output);
    }
    assert.match(output, /sha256 ok/);
  });

  it("report --pdf writes the PDF report", async () => {
    const pdf = join(dir, "reports", "report.pdf");
    const { code, output } = await runCliInPty(["report", completedRunId, "--pdf", pdf], env, dir);
    assert.equal(code, 0, output);
    assert.equal(readFileSync(pdf).subarray(0, 4).toString("latin1"), "%PDF");
    assert.match(output, new RegExp(`^Assay evaluation ${completedRunId} \\(\\d{4}-\\d{2}-\\d{2}\\): .*task pick-cube@v1 \\(frozen revision\\); robot so101@3\\.11; environment tabletop@1; success `, "m"));
    assert.ok(output.includes(`wrote ${pdf}`), output);
  });

  it("export --format mcap-bundle: progress while preparing and downloading, the sha256 verified, --extract unpacks it", async () => {
    const out = join(dir, "export");
    const { code, output } = await runCliInPty(["export", completedRunId, "--format", "mcap-bundle", "--out", out, "--extract"], env, dir);
    assert.equal(code, 0, output);
    const id = /export (exp_\w+)/.exec(output)?.[1];
    assert.ok(id, output);
    const exp = await apiJson(`/v1/exports/${id}`);
    assert.equal(exp.status, "ready");
    const archive = join(out, exp.file.name);
    assert.equal(createHash("sha256").update(readFileSync(archive)).digest("hex"), exp.file.sha256);
    assert.ok(output.includes(`sha256 ${exp.file.sha256} verified`), output);
    assert.match(output, /downloading .*100% /, output);
    assert.ok(existsSync(join(out, `${completedRunId}-mcap-bundle`, "manifest.json")), output);
    assert.ok(output.includes(`extracted ${join(out, `${completedRunId}-mcap-bundle`)}`), output);
  });

  it("runs watch exits 1 when the run is cancelled while watched, and so does watching the stopped run", async () => {
    const submitted = await runCliPiped(["runs", "submit", "-", "--json"], env, dir, JSON.stringify({ ...README_RUN_BODY, episodes: 40 }));
    assert.equal(submitted.code, 0, submitted.stderr);
    const id = (JSON.parse(submitted.stdout) as Json).id as string;
    const watch = startCliInPty(["runs", "watch", id], env, dir);
    await watch.waitFor(/[1-9]\d*\/40 episodes/, "a first finished episode");
    const cancel = await runCliPiped(["runs", "cancel", id], env, dir);
    assert.equal(cancel.code, 0, cancel.stderr);
    assert.match(cancel.stdout, new RegExp(`^${id} stopped: cancelled on request`));
    assert.equal(await watch.exited, 1, watch.output());
    const text = await watch.waitFor(/partial result/);
    assert.match(text, new RegExp(`${id} stopped: cancelled on request \\(key \\w+\\)`));
    assert.match(text, /\/40 episodes .*\| stopped/);
    assert.equal((await runEnd(service, id)).status, "stopped");

    const again = await runCliInPty(["runs", "watch", id], env, dir);
    assert.equal(again.code, 1, again.output);
    assert.match(again.output, /stopped: cancelled on request/);
  });

  it("runs watch reconnects when the event stream breaks, and counts each episode once", async () => {
    const proxy = await startStreamCuttingProxy(service.coordinator.baseUrl, { cuts: 1 });
    try {
      const body = JSON.stringify(BODY);
      const viaProxy = { ...env, ASSAY_BASE_URL: proxy.url };
      // Piped: stdout is not a terminal, so progress comes as one line per change.
      const watched = await runCliPiped(["runs", "submit", "-", "--watch", "--idempotency-key", "cli-spec-reconnect"], viaProxy, dir, body);
      assert.equal(watched.code, 0, `${watched.stdout}\n${watched.stderr}`);
      assert.equal(proxy.cuts(), 1);
      assert.ok(proxy.eventStreams() >= 2, "the watch opened the stream again");
      // Episodes reached the watch before the cut, and came again with the history after it.
      assert.match(watched.stdout, new RegExp(`^[1-9]\\d*/${EPISODES} episodes: .*; stream broke \\(.+\\); reconnecting in [\\d.]+ s$`, "m"));
      const id = /submitted (run_\w+)/.exec(watched.stdout)?.[1];
      const run = await apiJson(`/v1/runs/${id}`);
      assertFinalProgress(watched.stdout, new RegExp(`^${PROGRESS}: (?<ok>\\d+) success, (?<failed>\\d+) failure; rate so far ${RATE}; completed$`, "m"), run);
      assert.doesNotMatch(watched.stdout, new RegExp(`${EPISODES + 1}/${EPISODES} episodes`));
      assert.doesNotMatch(watched.stdout, /\x1b\[/, "no cursor movements in a log");

      // The same Idempotency-Key and body: the original run, nothing new.
      const replay = await runCliPiped(["runs", "submit", "-", "--idempotency-key", "cli-spec-reconnect"], env, dir, body);
      assert.equal(replay.code, 0, replay.stderr);
      assert.match(replay.stdout, new RegExp(`^submitted ${id} \\(completed\\) \\(already submitted with this Idempotency-Key`));
    } finally {
      await proxy.close();
    }
  });

  it("exit 2: an unknown command, a missing argument, a missing API key, a body that is not JSON", async () => {
    const unknown = await runCliPiped(["launch"], env, dir);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /error: unknown command 'launch'/);

    const missing = await runCliPiped(["runs", "watch"], env, dir);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /error: missing required argument 'run_id'/);

    const noKey = await runCliPiped(["robots"], { ASSAY_BASE_URL: env.ASSAY_BASE_URL }, dir);
    assert.equal(noKey.code, 2);
    assert.match(noKey.stderr, /^error: no API key: export ASSAY_API_KEY=/);
    assert.equal(noKey.stdout, "");

    writeFileSync(join(dir, "broken.json"), "{\"kind\": \"run\",");
    const broken = await runCliInPty(["runs", "submit", "broken.json"], env, dir);
    assert.equal(broken.code, 2);
    assert.match(broken.output, /error: broken\.json is not valid JSON/);
  });

  it("exit 3: an API error prints its message and doc_url on stderr (and the envelope under --json); an unreachable API says so", async () => {
    const unknown = await runCliPiped(["runs", "get", "run_doesNotExist"], env, dir);
    assert.equal(unknown.code, 3);
    assert.equal(unknown.stdout, "");
    assert.equal(unknown.stderr, `error: no run "run_doesNotExist" on this account (not_found)\nsee ${service.coordinator.baseUrl}/docs/errors#not_found\n`);

    const asJson = await runCliPiped(["runs", "watch", "run_doesNotExist", "--json"], env, dir);
    assert.equal(asJson.code, 3);
    assert.equal((JSON.parse(asJson.stdout) as Json).error.code, "not_found");
    assert.match(asJson.stderr, /\(not_found\)\nsee .*#not_found/);

    const invalid = await runCliInPty(["runs", "submit", "body.json", "--key", "asy_live_NotAKeyAnybodyHas0123456789"], env, dir);
    assert.equal(invalid.code, 3);
    assert.match(invalid.output, /\(invalid_api_key\)\r?\nsee .*#invalid_api_key/);

    const port = await freePort();
    const down = await runCliPiped(["runs", "list"], { ...env, ASSAY_BASE_URL: `http://127.0.0.1:${port}` }, dir);
    assert.equal(down.code, 3);
    assert.equal(down.stderr, `error: cannot reach the Assay API at http://127.0.0.1:${port}: connection refused; is the coordinator running?\n`);
  });
});
