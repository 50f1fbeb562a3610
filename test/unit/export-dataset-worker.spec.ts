/**
 * The training datasets of run exports, and calibration exports' episode records, are written on a worker thread
 * (coordinator/exports/dataset-writer.ts): the same files as the writers give in process, while the event loop's
 * own thread does next to none of the work;
 * a job stopped by its progress callback settles with that error once its writer has stopped, and a stopped
 * worker fails its jobs in plain words and is started again for the next dataset.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { EPISODES_PER_MESSAGE, workerDatasetWriter, type DatasetWriter } from "../../coordinator/exports/dataset-writer.js";
import { calibrationEpisode } from "../../coordinator/exports/calibration-episode.js";
import type { ExportEpisode, ExportRun } from "../../coordinator/exports/export-input.js";
import { writeTrainingDataset, type DatasetEntry, type TrainingFormat } from "../../coordinator/exports/format-writers.js";
import { MAX_EPISODES } from "../../coordinator/runs/episodes-spec.js";
import { writeFixtureEpisodes } from "../support/export-fixtures.js";
import { probeLoopHold } from "../support/loop-hold-probe.js";

const CAMERAS = [
  { name: "top", width: 32, height: 24 },
  { name: "wrist", width: 16, height: 12, everyNthStep: 2 },
];

/** The main thread's CPU time in ms (Linux: its own schedstat; elsewhere the process's, which makes the check below vacuous). */
function mainThreadCpuMs(): number {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, "ascii").split(" ", 1)[0]) / 1e6;
  } catch {
    return Number.NaN;
  }
}

const processCpuMs = () => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};

/** Each archive member by name: the SHA-256 of its bytes (a file written in parts: of the parts in order). */
function digests(entries: DatasetEntry[]): Map<string, string> {
  return new Map(entries.map((entry) => {
    const hash = createHash("sha256");
    for (const path of "path" in entry ? [entry.path] : entry.parts) hash.update(readFileSync(path));
    return [entry.name, hash.digest("hex")];
  }));
}

describe("the dataset worker: training datasets written off the event loop's thread", function () {
  this.timeout(120_000);
  let dir: string;
  let run: ExportRun;
  let episodes: ExportEpisode[];
  let writer: DatasetWriter;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "export-dataset-worker-"));
    ({ run, episodes } = await writeFixtureEpisodes(join(dir, "in"), { episodes: 4, cameras: CAMERAS, controlRateHz: 30, cellVideos: true }));
    writer = workerDatasetWriter();
  });
  after(async () => {
    await writer?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const format of ["lerobot", "rlds"] as TrainingFormat[]) {
    it(`${format}: the same files as in process, with progress after every episode, and the main thread does a small part of the CPU`, async () => {
      const inProcessDir = join(dir, `${format}-in-process`);
      mkdirSync(inProcessDir);
      const inProcess = await writeTrainingDataset(format, run, episodes, inProcessDir, () => undefined);
      // Once untimed: the worker's first dataset loads its modules.
      const warmDir = join(dir, `${format}-warm`);
      mkdirSync(warmDir);
      await writer.write(format, run, episodes.slice(0, 1), warmDir, () => undefined);

      const workerDir = join(dir, `${format}-worker`);
      mkdirSync(workerDir);
      const progress: number[] = [];
      const mainBefore = mainThreadCpuMs();
      const processBefore = processCpuMs();
      const entries = await writer.write(format, run, episodes, workerDir, (done) => progress.push(done));
      const mainMs = mainThreadCpuMs() - mainBefore;
      const processMs = processCpuMs() - processBefore;

      assert.deepEqual(progress, [1, 2, 3, 4]);
      assert.ok(entries.every((entry) => ("path" in entry ? [entry.path] : entry.parts).every((path) => !relative(workerDir, path).startsWith(".."))), "every member is under the worker's folder");
      const written = digests(entries);
      const expected = digests(inProcess);
      assert.deepEqual([...written.keys()], [...expected.keys()]);
      for (const [name, sha256] of expected) {
        // RLDS's dataset_info.json and features.json are the same; a LeRobot card or info carries no clock either.
        assert.equal(written.get(name), sha256, `${name} differs between the worker's dataset and the in-process one`);
      }
      console.log(`      ${format}: the main thread spent ${mainMs.toFixed(0)} ms of CPU of the process's ${processMs.toFixed(0)} ms while the worker wrote ${episodes.length} episodes`);
      if (!Number.isNaN(mainMs)) assert.ok(mainMs < 0.25 * processMs, `the main thread spent ${mainMs.toFixed(0)} ms of the process's ${processMs.toFixed(0)} ms of CPU: the dataset was not written on the worker`);
    });
  }

  it("a 10,000-episode job goes to the worker a page at a time, never holding the event loop for the whole list", async () => {
    // The largest run (MAX_EPISODES): the first episode's recording is missing, so the writer fails at once, once it has them all.
    const missing = join(dir, "gone", "ep_0.mcap");
    // Each with a replay spec the size of a README episode's (321 bytes of JSON), as a real run's episodes carry.
    const replaySpec = (i: number) => ({
      environment: "tabletop@1", layout_seed: 301704714 + i, lighting: "nominal", distractors: "none",
      objects: { cube: { object: "cube", pose: [0.22213, -0.03313, 0.015, -14.244] } }, distractor_objects: [],
      instruction: "pick up the red cube", instruction_set: "sampled", perturbation_rev: "assay-perturb@1",
    });
    const many = Array.from({ length: MAX_EPISODES }, (_, i) => ({ ...episodes[i % episodes.length], index: i, episodeId: `ep_many_${i}`, replaySpec: replaySpec(i) }));
    many[0] = { ...many[0], mcap: { ...many[0].mcap, path: missing } };
    const manyDir = join(dir, "many");
    mkdirSync(manyDir);
    const stop = probeLoopHold();
    await assert.rejects(writer.write("lerobot", run, many, manyDir, () => undefined), (error: Error) => error.message.includes(missing));
    const hold = stop();
    console.log(`      ${MAX_EPISODES} episodes sent in pages of ${EPISODES_PER_MESSAGE}: the event loop held at most ${hold.maxCpuGapMs.toFixed(1)} ms of CPU`);
    // Posted in one message the list held it 27 ms here; in pages 3.5-8.4 ms (the rest of a turn is room for a collection).
    assert.ok(hold.maxCpuGapMs < 20, `the event loop was held ${hold.maxCpuGapMs.toFixed(1)} ms of CPU in one turn`);
  });

  it("a calibration export's episode record comes from the worker as calibrationEpisode's JSON line; a missing recording fails in plain words", async () => {
    for (const [index, episode] of episodes.entries()) {
      const record = await writer.calibrationRecord(run.runId, episode, index === 0 ? 3 : null);
      assert.equal(Buffer.from(record).toString("utf8"), `${JSON.stringify(await calibrationEpisode(run.runId, episode, index === 0 ? 3 : null))}\n`);
    }
    const missing = join(dir, "gone", "calibration.mcap");
    await assert.rejects(writer.calibrationRecord(run.runId, { ...episodes[0], mcap: { ...episodes[0].mcap, path: missing } }, null), (error: Error) => error.message.includes(missing));
  });

  it("a job whose progress callback throws settles with that error once its writer stopped; the worker writes the next one", async () => {
    const stoppedDir = join(dir, "stopped");
    mkdirSync(stoppedDir);
    const calls: number[] = [];
    await assert.rejects(
      writer.write("lerobot", run, episodes, stoppedDir, (done) => {
        calls.push(done);
        if (done === 2) throw new Error("the export was purged");
      }),
      { message: "the export was purged" },
    );
    // The writer stopped at its next report, so no progress came after the throw.
    assert.deepEqual(calls, [1, 2]);

    const nextDir = join(dir, "after-stop");
    mkdirSync(nextDir);
    const entries = await writer.write("rlds", run, episodes.slice(0, 2), nextDir, () => undefined);
    assert.ok(entries.length > 0);
  });

  it("an aborted signal stops the job; a worker stopped mid-job fails it in plain words and the next dataset starts a new one", async () => {
    const abortedDir = join(dir, "aborted");
    mkdirSync(abortedDir);
    const controller = new AbortController();
    const aborted = writer.write("lerobot", run, episodes, abortedDir, (done) => {
      if (done === 1) controller.abort(new Error("the coordinator is stopping"));
    }, controller.signal);
    await assert.rejects(aborted, { message: "the coordinator is stopping" });

    const own = workerDatasetWriter();
    try {
      const closedDir = join(dir, "closed");
      mkdirSync(closedDir);
      let closing: Promise<void> | undefined;
      const cut = own.write("lerobot", run, episodes, closedDir, () => void (closing ??= own.close()));
      await assert.rejects(cut, { message: "the dataset worker was stopped (the coordinator is shutting down)" });
      await closing;
      const againDir = join(dir, "again");
      mkdirSync(againDir);
      const entries = await own.write("rlds", run, episodes.slice(0, 1), againDir, () => undefined);
      assert.ok(entries.some((entry) => entry.name.endsWith("dataset_info.json")), JSON.stringify(entries.map((entry) => entry.name)));
    } finally {
      await own.close();
    }
  });
});
