/**
 * The life of a prepared archive (a run export or a calibration export):
 *
 *   preparing -> ready      the worker finished the archive; it can be downloaded until expires_at
 *   preparing -> preparing  redone: the worker (or the process) stopped before it finished
 *   preparing -> failed     the archive could not be made (attempts exhausted, unreadable recording)
 *   preparing -> expired    the run's recordings were purged or passed retention while it was made
 *   ready     -> expired    past expires_at, or the run's recordings were purged; the file is deleted
 *   failed    -> expired    the run's recordings were purged
 *
 * Nothing leaves `expired`.
 */
export const EXPORT_STATUSES = ["preparing", "ready", "failed", "expired"] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

const MOVES: Record<ExportStatus, readonly ExportStatus[]> = {
  preparing: ["preparing", "ready", "failed", "expired"],
  ready: ["expired"],
  failed: ["expired"],
  expired: [],
};

/** The statuses an archive may move to `to` from: the store's conditional UPDATE admits only these (exports-repo.ts moveArchiveRow). */
export function exportStatusesBefore(to: ExportStatus): ExportStatus[] {
  return EXPORT_STATUSES.filter((from) => MOVES[from].includes(to));
}

/** Why an expired archive expired (`failure_reason` of an expired row). */
export type ExpiryReason = "purged" | "retention" | "availability";
