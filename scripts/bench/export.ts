/**
 * Export throughput: a completed 100-episode run exported in each format through the real
 * coordinator (POST /v1/runs/{id}/export, the archive worker, the archive on disk), against copying
 * the same recording bytes into one file in the same run (the floor any archive pays), and the
 * coordinator process's peak memory while exporting (RSS sampled every 10 ms; ffmpeg, which the
 * lerobot export runs as a child process, is not in it).
 *
 * The episodes are one real simulated episode (README quick-start policy on so101-b: its MCAP and
 * MP4 as the cell uploaded them) stored 100 times under new episode ids, so every format reads the
 * same realistic recordings. The episode's MCAP is also rewritten in the recording layout before
 * compressed chunks and binary camera frames, for the size ratio (`episode_mcap_vs_previous_layout`).
 *
 * The copy is measured three times and its best wall and CPU times are the baseline. The exports are
 * measured once by default, so a ratio errs high, never low, when the machine is busy; with `repeats`
 * each format is exported that many times and its best attempt counts, as the copy's does (on a shared
 * 2-core machine one attempt's CPU time varied 2.2-3.3 s for the same RLDS export).
 *
 * Beside each wall-time ratio, the coordinator process's CPU time (`..._cpu_s`, user + system, so
 * ffmpeg is not in it): on a loaded machine wall time mostly measures the load, CPU time the work.
 * `..._main_thread_cpu_s`: the part of it on the event loop's thread (the training datasets are written
 * on a worker thread, coordinator/exports/dataset-writer.ts; the bench process is the coordinator's).
 * `copy_fsync_s` is the copy with the fsync a store does before an archive counts as written (the
 * disk store's `put` fsyncs; the plain copy does not), for telling disk flush from CPU; best of three, as
 * the copy is, and `..._vs_copy_fsync` is each export's wall time over it (the export pays that flush, the
 * plain copy does not). What the copy reads: every stored file of every episode (MCAP and each camera's
 * video), which is what the LeRobot export reads; RLDS reads the MCAPs alone and the mcap-bundle the MCAP
 * and the primary camera's video, a few percent less, so their ratios err low by that much. The copy
 * reads into one reused buffer, as the archive writer does (`copy_stream_cpu_s`: the streamed copy of
 * earlier runs, fresh buffers, and `..._cpu_vs_copy_stream` each export's CPU over it). The copy
 * computes no SHA-256; an export's figures include the one its archive gets from the store's `put`.
 *
 * Each export's start and end go to stderr as `MARK start|end <format> <CLOCK_MONOTONIC s>`, to cut its
 * window out of a profile: `perf record -k CLOCK_MONOTONIC -g -- node --perf-basic-prof --import tsx
 * scripts/bench/export.ts 100 rlds`, then `perf script --time <start>,<end>` (V8's own profiler
 * mis-charges descheduled time on a loaded machine).
 *
 * ASSAY_BENCH_EXPORT_EPISODES_DIR=<dir> records the source episode into <dir> when it holds none and reads it
 * from there otherwise, so runs (and trees: the script runs unchanged in a checkout of an older commit) are
 * measured on the same bytes; without it each run records its own episode into its data folder.
 *
 *   npx tsx scripts/bench/export.ts [episodes, default 100] [formats, default mcap-bundle,rlds,lerobot] [repeats, default 1]
 */
import { copyFileSync, createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { once } from "node:events";
import { pathToFileURL } from "node:url";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { DEFAULT_ACCOUNT_ID } from "../../coordinator/store/accounts-repo.js";
import { insertPendingArtifact, listArtifacts, markArtifactStored } from "../../coordinator/store/artifacts-repo.js";
import { listEpisodeRecords, markEpisodeDone } from "../../coordinator/store/episodes-repo.js";
import { moveExport } from "../../coordinator/store/exports-repo.js";
import * as runsRepo from "../../coordinator/store/runs-repo.js";
import { README_RUN_BODY } from "../../test/fixtures.js";
import { rewriteInLegacyLayout } from "../../test/support/legacy-mcap-recorder.js";
import { runEnd, startTestService } from "../../test/integration/helpers.js";
import type { Figure } from "../bench.js";

const BENCH = "export";
const MB = 1024 * 1024;

const FORMATS = ["mcap-bundle", "rlds", "lerobot"] as const;

export async function run(
  episodes = 100, formats: readonly (typeof FORMATS)[number][] = FORMATS, repeats = 1, episodesDir = process.env.ASSAY_BENCH_EXPORT_EPISODES_DIR || undefined,
): Promise<Figure[]> {
  if (!Number.isInteger(repeats) || repeats < 1) throw new Error(`repeats must be a whole number from 1; got ${repeats}`);
  const service = await startTestService({ cells: [] });
  const figures: Figure[] = [];
  const figure = (metric: string, value: number, unit: string) => figures.push({ bench: BENCH, metric, value: Number(value.toFixed(3)), unit });
  try {
    const { db } = service.coordinator;
    const artifactsDir = join(service.dataDir, "artifacts");
    const source = await sourceEpisode(episodesDir ?? join(service.dataDir, "source-episode"));
    const { files, episode } = source;

    // The source episode, stored `episodes` times as one completed run.
    const runId = "run_benchexport0000000001";
    const stored = new Date().toISOString();
    await runsRepo.insertRun(db, {
      id: runId, accountId: DEFAULT_ACCOUNT_ID, kind: "run", created: stored, request: { ...README_RUN_BODY, episodes, data: { retention: "30d", train_on_failures: true } },
      resolvedPins: source.resolvedPins, plan: { model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 1, control_rate_hz: 30, max_duration_s: 20 },
      priority: "standard", episodesTotal: episodes,
    });
    let inputBytes = 0;
    const inputPaths: string[] = [];
    for (let i = 0; i < episodes; i++) {
      const episodeId = runsRepo.episodeId(runId, i);
      await markEpisodeDone(db, episodeId, {
        cellId: episode.cellId ?? "so101-b", outcome: "success", failureCluster: null, durationS: episode.durationS ?? 1, resetS: 1,
        replaySpecJson: JSON.stringify(episode.replaySpec), metaJson: JSON.stringify(episode.meta), evaluationJson: null, finishedAt: stored,
      });
      for (const f of files) {
        const fileName = f.fileName.replace(source.episodeId, episodeId);
        const folder = join(artifactsDir, runId, episodeId);
        mkdirSync(folder, { recursive: true });
        copyFileSync(join(source.dir, f.fileName), join(folder, fileName));
        await insertPendingArtifact(db, { episodeId, runId, kind: f.kind, fileName, bytes: f.bytes, sha256: f.sha256 });
        await markArtifactStored(db, episodeId, f.kind, stored);
        inputBytes += f.bytes;
        inputPaths.push(join(folder, fileName));
      }
    }
    for (const status of ["scheduling", "running"] as const) await runsRepo.setRunStatus(db, runId, status);
    await service.coordinator.lifecycle.end(db, runId, { status: "completed" });
    figure("input_bytes", inputBytes / MB, "MB");

    // The floor: the same bytes read and written into one file (best of three), and once more with an fsync at the end.
    // The copy reads every input into one reused 1 MiB buffer and writes it out, as the archive writer
    // does since its buffer is reused (`stream`: the copy before, a read stream's fresh 64 KiB buffers
    // written to a write stream, which in this process started a mark-compact every few tens of MB, 0-20
    // per three copies: its CPU time is kept as `copy_stream_cpu_s` for comparison with earlier runs).
    const copy = async (flush: boolean, way: "buffer" | "stream" = "buffer") => {
      const copyTarget = join(service.dataDir, "copy.bin");
      const copyCpu = process.cpuUsage();
      const copyStarted = performance.now();
      if (way === "stream") {
        const out = createWriteStream(copyTarget, { flush });
        for (const path of inputPaths) {
          for await (const chunk of createReadStream(path)) if (!out.write(chunk)) await once(out, "drain");
        }
        await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
      } else {
        const buffer = Buffer.allocUnsafe(MB);
        const out = await open(copyTarget, "w");
        try {
          for (const path of inputPaths) {
            const input = await open(path, "r");
            try {
              for (let n; (n = (await input.read(buffer, 0, MB, null)).bytesRead) > 0; ) {
                for (let written = 0; written < n; ) written += (await out.write(buffer, written, n - written)).bytesWritten;
              }
            } finally {
              await input.close();
            }
          }
          if (flush) await out.sync();
        } finally {
          await out.close();
        }
      }
      const seconds = (performance.now() - copyStarted) / 1000;
      rmSync(copyTarget);
      return { seconds, cpuS: cpuSeconds(process.cpuUsage(copyCpu)) };
    };
    // The best of three copies: on a loaded machine one copy's CPU time varied 0.5-1.2 s between runs,
    // and a ratio over one inflated copy flatters every export.
    process.stderr.write(`MARK start copy ${monotonicS()}\n`);
    const copies = [await copy(false), await copy(false), await copy(false)];
    process.stderr.write(`MARK end copy ${monotonicS()}\n`);
    const copyS = Math.min(...copies.map((c) => c.seconds));
    const copyCpuS = Math.min(...copies.map((c) => c.cpuS));
    figure("copy_s", copyS, "s");
    figure("copy_cpu_s", copyCpuS, "s");
    figure("copy_throughput", inputBytes / MB / copyS, "MB/s");
    process.stderr.write(`MARK start copy-stream ${monotonicS()}\n`);
    const streamCopies = [await copy(false, "stream"), await copy(false, "stream"), await copy(false, "stream")];
    process.stderr.write(`MARK end copy-stream ${monotonicS()}\n`);
    const copyStreamCpuS = Math.min(...streamCopies.map((c) => c.cpuS));
    figure("copy_stream_cpu_s", copyStreamCpuS, "s");
    // The store fsyncs an archive before it counts as written, and on this shared virtual disk one flush of
    // the same bytes took 0.45-2.1 s between runs: best of three too, for the `_vs_copy_fsync` ratios.
    const copyFsyncS = Math.min((await copy(true)).seconds, (await copy(true)).seconds, (await copy(true)).seconds);
    figure("copy_fsync_s", copyFsyncS, "s");

    for (const format of formats) {
      // Each attempt is a new export: the one before is expired (as its availability lapsing would) so
      // the request is not answered with it. With `repeats` > 1 the figures are the best attempt's, as
      // the copy's are (`_first_s`, `_first_cpu_s`: the first attempt, whose code V8 has not compiled yet).
      const attempts: Array<{ seconds: number; cpuS: number; mainCpuS: number; peakRss: number; baselineRss: number; bytes: number; loopDelayMaxMs: number }> = [];
      for (let attempt = 0; attempt < repeats; attempt++) {
        global.gc?.();
        const baselineRss = process.memoryUsage().rss;
        let peakRss = baselineRss;
        const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 10);
        const loopDelay = monitorEventLoopDelay({ resolution: 5 });
        loopDelay.enable();
        const cpu = process.cpuUsage();
        const mainCpu = mainThreadCpuS();
        const started = performance.now();
        process.stderr.write(`MARK start ${format} ${monotonicS()}\n`);
        const response = await service.api(`/v1/runs/${runId}/export`, { method: "POST", json: { format } });
        const body = (await response.json()) as { id: string };
        if (response.status !== 202) throw new Error(`export ${format} answered ${response.status}: ${JSON.stringify(body)}`);
        await service.coordinator.archives.idle();
        process.stderr.write(`MARK end ${format} ${monotonicS()}\n`);
        const seconds = (performance.now() - started) / 1000;
        const cpuS = cpuSeconds(process.cpuUsage(cpu));
        const mainCpuS = mainThreadCpuS() - mainCpu;
        clearInterval(sampler);
        loopDelay.disable();
        const done = (await (await service.api(`/v1/exports/${body.id}`)).json()) as { status: string; file: { bytes: number } | null; failure: unknown };
        if (done.status !== "ready") throw new Error(`export ${format} ended ${done.status}: ${JSON.stringify(done.failure)}`);
        attempts.push({ seconds, cpuS, mainCpuS, peakRss, baselineRss, bytes: done.file!.bytes, loopDelayMaxMs: loopDelay.max / 1e6 });
        await moveExport(db, body.id, "expired", { failure_reason: "availability", failure_message: "expired by the bench for the next attempt" }, "ready");
        rmSync(join(artifactsDir, ".exports", body.id), { recursive: true, force: true });
      }
      const seconds = Math.min(...attempts.map((a) => a.seconds));
      const cpuS = Math.min(...attempts.map((a) => a.cpuS));
      const peakRss = Math.max(...attempts.map((a) => a.peakRss));
      const baselineRss = attempts[0].baselineRss;
      figure(`${format}_s`, seconds, "s");
      figure(`${format}_throughput`, inputBytes / MB / seconds, "MB/s");
      figure(`${format}_vs_copy`, seconds / copyS, "ratio");
      figure(`${format}_vs_copy_fsync`, seconds / copyFsyncS, "ratio");
      figure(`${format}_cpu_s`, cpuS, "s");
      figure(`${format}_cpu_vs_copy`, cpuS / copyCpuS, "ratio");
      figure(`${format}_cpu_vs_copy_stream`, cpuS / copyStreamCpuS, "ratio");
      // What the export cost the thread of the coordinator's event loop (the rest: the dataset worker, V8's and
      // libuv's threads), least over the attempts.
      figure(`${format}_main_thread_cpu_s`, Math.min(...attempts.map((a) => a.mainCpuS)), "s");
      if (repeats > 1) {
        figure(`${format}_first_s`, attempts[0].seconds, "s");
        figure(`${format}_first_cpu_s`, attempts[0].cpuS, "s");
      }
      figure(`${format}_archive`, attempts[0].bytes / MB, "MB");
      figure(`${format}_peak_rss`, peakRss / MB, "MB");
      figure(`${format}_rss_growth`, (peakRss - baselineRss) / MB, "MB");
      // The event loop's longest wait, least over the attempts (perf_hooks, 5 ms resolution): a block by the
      // export, or on a loaded machine the process waiting for a core.
      figure(`${format}_loop_delay_max_ms`, Math.min(...attempts.map((a) => a.loopDelayMaxMs)), "ms");
    }
    const episodeMcap = inputPaths.find((p) => p.endsWith(".mcap"))!;
    figure("episode_mcap", statSync(episodeMcap).size / MB, "MB");
    // The same episode in the layout before compressed chunks and binary frames.
    const previous = join(service.dataDir, "previous-layout.mcap");
    await rewriteInLegacyLayout(episodeMcap, previous);
    figure("episode_mcap_previous_layout", statSync(previous).size / MB, "MB");
    figure("episode_mcap_vs_previous_layout", statSync(episodeMcap).size / statSync(previous).size, "ratio");
  } finally {
    await service.stop();
  }
  return figures;
}

/** User + system CPU of this process's main thread (the event loop's), from /proc (NaN where there is none). */
function mainThreadCpuS(): number {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, "ascii").split(" ", 1)[0]) / 1e9;
  } catch {
    return Number.NaN;
  }
}

/** The recorded episode every export reads, with what the store knows of it (`source.json` beside its files). */
interface SourceEpisode {
  dir: string;
  episodeId: string;
  resolvedPins: runsRepo.NewRun["resolvedPins"];
  episode: { cellId: string | null; durationS: number | null; replaySpec: unknown; meta: unknown };
  files: Array<{ kind: string; fileName: string; bytes: number; sha256: string }>;
}

/**
 * The source episode in `dir`: read from it when `dir` holds one (`source.json`), else recorded by a
 * simulated so101-b (the README quick-start policy, one episode, the fleet's fixed seed) into it first. A
 * run pointed at the same directory as an earlier one (ASSAY_BENCH_EXPORT_EPISODES_DIR) measures the same
 * bytes, from this tree or another: without it each run records its own episode (199-231 MB for 100).
 */
async function sourceEpisode(dir: string): Promise<SourceEpisode> {
  const manifest = join(dir, "source.json");
  if (existsSync(manifest)) return { ...(JSON.parse(readFileSync(manifest, "utf8")) as Omit<SourceEpisode, "dir">), dir };
  const recorder = await startTestService({ cells: ["so101-b"] });
  try {
    const { db } = recorder.coordinator;
    const created = (await (await recorder.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: 1 } })).json()) as { id: string };
    const { run: recorded } = await runEnd(recorder, created.id);
    if (recorded.status !== "completed") throw new Error(`the source run ended ${recorded.status}`);
    const record = (await listEpisodeRecords(db, created.id))[0]!;
    const stored = (await listArtifacts(db, created.id)).filter((a) => a.status === "stored");
    mkdirSync(dir, { recursive: true });
    for (const f of stored) copyFileSync(join(recorder.dataDir, "artifacts", f.run_id, f.episode_id, f.file_name), join(dir, f.file_name));
    const source: Omit<SourceEpisode, "dir"> = {
      episodeId: record.id,
      resolvedPins: recorded.resolved_pins as SourceEpisode["resolvedPins"],
      episode: { cellId: record.cellId ?? null, durationS: record.durationS ?? null, replaySpec: record.replaySpec, meta: record.meta },
      files: stored.map((f) => ({ kind: f.kind, fileName: f.file_name, bytes: f.bytes, sha256: f.sha256 })),
    };
    writeFileSync(manifest, JSON.stringify(source, null, 1));
    return { ...source, dir };
  } finally {
    await recorder.stop();
  }
}

/** CLOCK_MONOTONIC in seconds, the clock of `perf record -k CLOCK_MONOTONIC` samples. */
function monotonicS(): string {
  return (Number(process.hrtime.bigint()) / 1e9).toFixed(6);
}

function cpuSeconds(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1e6;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const formats = process.argv[3]?.split(",").map((f) => {
    if (!(FORMATS as readonly string[]).includes(f)) throw new Error(`unknown format ${JSON.stringify(f)}; formats: ${FORMATS.join(", ")}`);
    return f as (typeof FORMATS)[number];
  });
  const figures = await run(Number(process.argv[2] ?? 100), formats, Number(process.argv[4] ?? 1));
  for (const f of figures) console.log(JSON.stringify(f));
}
