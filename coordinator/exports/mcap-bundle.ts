/**
 * The mcap-bundle: the audit record of a run. Every episode that ran, whatever its outcome, with its
 * MCAP and video as stored, a manifest, and the run's JSON report:
 *
 *   <run_id>-mcap-bundle/manifest.json
 *   <run_id>-mcap-bundle/report.json
 *   <run_id>-mcap-bundle/episodes/<index, 6 digits>-<episode_id>/<episode_id>.mcap (and .mp4)
 *
 * manifest.json (schema `assay.mcap_bundle/1`): the run, its resolved pins and timestamps, and per
 * episode its index, unit pins, cell, seed, outcome, policy_succeeded, intervened, failure cluster,
 * duration, replay spec, and each file's path in the archive, kind, size and SHA-256 (the values
 * verified when the cell uploaded it). `sha256sum -c` works on the `SHA256SUMS` file beside it.
 */
import { stat } from "node:fs/promises";
import { DiskStore } from "../storage/disk-store.js";
import { ObjectStoreError, type ObjectStore } from "../storage/object-store.js";
import type { ExportEpisode, ExportRun, StoredObject } from "./export-input.js";
import type { ArchiveEntry } from "./tar-archive.js";

export const MCAP_BUNDLE_SCHEMA = "assay.mcap_bundle/1";

export function mcapBundleRoot(runId: string): string {
  return `${runId}-mcap-bundle`;
}

function episodeDir(e: ExportEpisode<StoredObject>): string {
  return `episodes/${String(e.index).padStart(6, "0")}-${e.episodeId}`;
}

export function mcapBundleManifest(run: ExportRun, episodes: readonly ExportEpisode<StoredObject>[], excluded: Record<string, number>, exportedAt: string): Record<string, unknown> {
  return {
    schema: MCAP_BUNDLE_SCHEMA,
    run_id: run.runId,
    kind: run.kind,
    resolved_pins: run.resolvedPins,
    created: run.created,
    completed: run.completed,
    exported_at: exportedAt,
    control_rate_hz: run.controlRateHz,
    episodes_total: episodes.length,
    excluded,
    episodes: episodes.map((e) => ({
      episode_id: e.episodeId,
      index: e.index,
      robot: e.robot,
      environment: e.environment,
      task: e.task,
      instruction: e.instruction,
      cell_id: e.cellId,
      seed: e.seed,
      outcome: e.outcome,
      policy_succeeded: e.policySucceeded,
      intervened: e.intervened,
      failure_cluster: e.failureCluster,
      duration_s: e.durationS,
      replay_spec: e.replaySpec,
      files: [e.mcap, ...(e.video ? [e.video] : [])].map((f) => ({
        path: `${episodeDir(e)}/${f.fileName}`,
        kind: f === e.mcap ? "mcap" : "video",
        bytes: f.bytes,
        sha256: f.sha256,
      })),
    })),
  };
}

/**
 * The archive's members in order: manifest, checksums, report, then each episode's files, streamed
 * from the artifact store (a disk store's files are read in place, 1 MiB at a time like any local
 * file: its 64 KiB stream made a bundle about a fifth dearer in CPU, through sixteen times the chunks
 * in every stream stage). Checks each file's stored size against the manifest before it is streamed;
 * `onEpisode` is called after each episode.
 */
export async function* mcapBundleEntries(
  objects: ObjectStore, run: ExportRun, episodes: readonly ExportEpisode<StoredObject>[], excluded: Record<string, number>, report: unknown, exportedAt: string, onEpisode: (done: number) => void,
): AsyncGenerator<ArchiveEntry> {
  const root = mcapBundleRoot(run.runId);
  const manifest = mcapBundleManifest(run, episodes, excluded, exportedAt);
  const json = (value: unknown) => new TextEncoder().encode(`${JSON.stringify(value, null, 2)}\n`);
  yield { name: `${root}/manifest.json`, data: json(manifest) };
  const sums = episodes.flatMap((e) => [e.mcap, ...(e.video ? [e.video] : [])].map((f) => `${f.sha256}  ${episodeDir(e)}/${f.fileName}\n`)).join("");
  yield { name: `${root}/SHA256SUMS`, data: new TextEncoder().encode(sums) };
  yield { name: `${root}/report.json`, data: json(report) };
  let done = 0;
  for (const e of episodes) {
    for (const file of [e.mcap, ...(e.video ? [e.video] : [])]) {
      const changed = (bytes: number) =>
        new Error(`${file.fileName} of episode ${e.episodeId} has ${bytes} bytes in the artifact store but ${file.bytes} were stored; the recording changed after upload`);
      const name = `${root}/${episodeDir(e)}/${file.fileName}`;
      if (objects instanceof DiskStore) {
        const path = objects.pathOf(file.key);
        // What the store's get says of a missing object, not the server's path.
        const size = await stat(path).then((s) => s.size, (error: NodeJS.ErrnoException) => {
          throw error.code === "ENOENT" || error.code === "ENOTDIR" ? new ObjectStoreError("not_found", `no object ${file.key}`, { key: file.key }) : error;
        });
        if (size !== file.bytes) throw changed(size);
        yield { name, path };
        continue;
      }
      const open = async () => {
        const got = await objects.get(file.key);
        if (got.totalBytes !== file.bytes) {
          got.body.destroy();
          throw changed(got.totalBytes);
        }
        return got.body;
      };
      yield { name, bytes: file.bytes, open };
    }
    onEpisode(++done);
  }
}
