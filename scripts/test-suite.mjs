#!/usr/bin/env node
/**
 * `npm test`: the whole mocha suite in two (ASSAY_TEST_JOBS) mocha processes at once, each running its
 * share of the spec files one after another exactly as `npx mocha` does (same configuration, root hooks,
 * reporter, shared fleet and shared browser per process). A serial run left a core idle for a third of
 * its time: many files wait on simulated seconds, a browser or a child process more than they compute.
 *
 * Files whose assertions are wall-clock bounds an issue asked for (the e-stop's latency, a probe answered
 * within 200 ms while something heavy runs, an endpoint's latency budget) run after both shares, alone in
 * one mocha, as a serial suite runs them: SOLO_FILES below, each with its reason.
 *
 * The other files are dealt by their last measured wall time (test/suite-times.json, written by
 * `ASSAY_TEST_TIMES=test/suite-times.json npm test`; a file not in it counts as 5 s), heaviest first,
 * each to the share with the least time so far (longest-processing-time first). The files that use one
 * shared fleet (test/support/shared-fleet.ts) are dealt together to one share and run one after another:
 * the fleet starts once (a start and its cells' V8 warm-up are CPU), and stops after its last file (an
 * idle fleet's CPU is the other share's loss). Output is streamed live,
 * each line prefixed with its share's number; each share's summary follows its own output, and the last
 * line is the whole suite's "N passed, N failed, N skipped". Before it, every share's failures once more
 * ("failed: " lines: where, the message, the innermost frame of our own code), so the log's tail, which
 * may be all CI keeps, says what failed. The exit code is non-zero if either share failed.
 *
 *   npm test                              both shares
 *   ASSAY_TEST_JOBS=1 npm test            one mocha, the configured spec list, serially
 *   npm test -- test/unit/foo.spec.ts     the named files in one mocha (as `npx mocha` does)
 *   ASSAY_TEST_TIMES=f.json npm test      every file's wall and CPU figures, both shares merged into f.json
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const mocha = join(root, "node_modules", "mocha", "bin", "mocha.js");
/** Where spec files live (as .mocharc.cjs lists them). */
const SPEC_ROOTS = ["test", "coordinator", "cell-agent", "simulators", "firmware-pins", "protocol"];
const UNKNOWN_FILE_S = 5;
const TIMES_FILE = join(root, "test", "suite-times.json");
/** Run alone after the shares: their assertions are wall-clock bounds that another busy process would blur. */
export const SOLO_FILES = [
  "test/integration/estop-latency.spec.ts", // the e-stop halts within its latency bound (p99 < 50 ms)
  "test/integration/hostile-bounds.spec.ts", // a probe answers within 200 ms while the largest PDF renders
  "test/integration/large-listing.spec.ts", // no turn of the event loop over 100 ms of CPU (500 ms wall) while 10,000 episodes are listed
  "test/integration/large-run-requests.spec.ts", // no turn of the event loop over 100 ms of CPU while a 10,000-episode run is exported or purged
  "test/integration/hostile-queues.spec.ts", // probes answer within their bound while queues are flooded
  "test/integration/hostile-input.spec.ts", // the slowest answer to hostile input stays under its bound
  "test/integration/hostile-models.spec.ts", // the same while hostile models are uploaded
  "test/unit/openpi-session.spec.ts", // a reply within latency_budget_ms 100 is on time, a 300 ms one a miss
];

function specFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return specFiles(path);
    return entry.name.endsWith(".spec.ts") ? [relative(root, path)] : [];
  });
}

function lastTimes() {
  try {
    return new Map(JSON.parse(readFileSync(TIMES_FILE, "utf8")).map((t) => [t.file, t.wall_s]));
  } catch {
    return new Map();
  }
}

/**
 * Deals `files` into `jobs` shares of about equal time, heaviest first, each to the share with the least
 * time so far. The files of one shared fleet (`fleetOf(file)`, undefined for none) are dealt together, as
 * one item of their summed time, and run one after another, heaviest first: the fleet starts once, in one
 * share, and is up only while they run.
 */
export function dealFiles(files, jobs, timeOf, fleetOf = () => undefined) {
  const shares = Array.from({ length: jobs }, () => ({ files: [], s: 0 }));
  const heaviestFirst = (a, b) => timeOf(b) - timeOf(a) || a.localeCompare(b);
  const items = new Map();
  for (const file of files) {
    const fleet = fleetOf(file);
    const key = fleet === undefined ? `file:${file}` : `fleet:${fleet}`;
    const item = items.get(key) ?? { files: [], s: 0 };
    item.files.push(file);
    item.s += timeOf(file);
    items.set(key, item);
  }
  const sorted = [...items.values()].map((item) => ({ ...item, files: item.files.sort(heaviestFirst) }))
    .sort((a, b) => b.s - a.s || a.files[0].localeCompare(b.files[0]));
  for (const item of sorted) {
    const share = shares.reduce((least, s) => (s.s < least.s ? s : least));
    share.files.push(...item.files);
    share.s += item.s;
  }
  return shares;
}

/**
 * The shared fleet a spec file uses: the arguments of its `useSharedFleet(...)` call before the callback
 * (its cells and options, as written), or undefined when it uses none.
 */
export function sharedFleetOf(source) {
  const call = /useSharedFleet\(\s*([\s\S]*?),\s*\(\w*\)\s*=>/.exec(source);
  return call ? call[1].replace(/\s+/g, " ") : undefined;
}

function fleetOfFile(file) {
  try {
    return sharedFleetOf(readFileSync(join(root, file), "utf8"));
  } catch {
    return undefined;
  }
}

function runMocha(args, env, prefix) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [mocha, ...args], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
    const summary = { passed: 0, failed: 0, skipped: 0, seen: false, failures: [] };
    const relay = (stream, out) => {
      let pending = "";
      stream.on("data", (chunk) => {
        pending += chunk.toString();
        const lines = pending.split("\n");
        pending = lines.pop();
        for (const line of lines) {
          const counts = /^(\d+) passed, (\d+) failed, (\d+) skipped$/.exec(line);
          if (counts) Object.assign(summary, { passed: +counts[1], failed: +counts[2], skipped: +counts[3], seen: true });
          if (line.startsWith("failed: ")) summary.failures.push(`${prefix}${line}`);
          out.write(`${prefix}${line}\n`);
        }
      });
      stream.on("end", () => pending && out.write(`${prefix}${pending}\n`));
    };
    relay(child.stdout, process.stdout);
    relay(child.stderr, process.stderr);
    const stop = () => child.kill("SIGTERM");
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    const started = Date.now();
    child.on("close", (code, signal) => {
      const wallS = (Date.now() - started) / 1000;
      if (prefix) process.stdout.write(`${prefix}ended after ${wallS.toFixed(0)} s wall\n`);
      resolve({ code: code ?? (signal ? 1 : 0), summary, wallS });
    });
  });
}

async function main() {
  const named = process.argv.slice(2);
  const jobs = Math.max(1, Math.min(Number(process.env.ASSAY_TEST_JOBS ?? 2) || 1, availableParallelism()));
  if (named.length > 0 || jobs === 1) {
    const { code } = await runMocha(named, process.env, "");
    process.exit(code);
  }
  const times = lastTimes();
  const all = SPEC_ROOTS.flatMap((r) => specFiles(join(root, r)));
  const solo = SOLO_FILES.filter((f) => all.includes(f));
  const shares = dealFiles(all.filter((f) => !solo.includes(f)), jobs, (f) => times.get(f) ?? UNKNOWN_FILE_S, fleetOfFile);
  const timesOut = process.env.ASSAY_TEST_TIMES;
  const started = Date.now();
  console.log(`${shares.reduce((n, s) => n + s.files.length, 0)} spec files in ${jobs} mocha processes at once (${shares.map((s, i) => `[${i + 1}] ${s.files.length} files, ~${Math.round(s.s)} s alone`).join("; ")})`);
  const results = await Promise.all(shares.map((share, i) => {
    const env = { ...process.env, ...(timesOut ? { ASSAY_TEST_TIMES: `${timesOut}.${i + 1}` } : {}) };
    return runMocha(share.files, env, `[${i + 1}] `);
  }));
  if (solo.length > 0) {
    console.log(`${solo.length} files with wall-clock bounds, alone: ${solo.join(" ")}`);
    const env = { ...process.env, ...(timesOut ? { ASSAY_TEST_TIMES: `${timesOut}.${shares.length + 1}` } : {}) };
    results.push(await runMocha(solo, env, "[solo] "));
  }
  if (timesOut) {
    const merged = results.flatMap((_, i) => {
      const part = `${timesOut}.${i + 1}`;
      if (!existsSync(part)) return [];
      const entries = JSON.parse(readFileSync(part, "utf8"));
      rmSync(part);
      return entries;
    });
    writeFileSync(timesOut, JSON.stringify(merged.sort((a, b) => a.file.localeCompare(b.file)), null, 1));
  }
  const total = results.reduce((t, r) => ({ passed: t.passed + r.summary.passed, failed: t.failed + r.summary.failed, skipped: t.skipped + r.summary.skipped }), { passed: 0, failed: 0, skipped: 0 });
  const broken = results.filter((r) => r.code !== 0 && r.summary.failed === 0).length;
  console.log(`whole suite: ${jobs} mocha processes at once, then one for the files run alone, ${((Date.now() - started) / 1000).toFixed(0)} s wall${broken ? `; ${broken} process(es) ended with an error outside any test (see its lines above)` : ""}`);
  for (const line of results.flatMap((r) => r.summary.failures)) console.log(line);
  console.log(`${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
  process.exit(results.some((r) => r.code !== 0) ? 1 : 0);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
