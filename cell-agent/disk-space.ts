/**
 * Free space in the agent's data directory and the disk-full policy: below 1 GB free the cell takes no
 * new episodes (heartbeat "held", reason disk_full); below 5 GB the doctor warns. Recordings are
 * never deleted to make room: they leave the disk only after the coordinator confirms the upload.
 */
import { statfsSync } from "node:fs";

export const DISK_FAIL_BYTES = 1e9;
export const DISK_WARN_BYTES = 5e9;

/** Bytes available to the agent's user on the filesystem holding `dir`. */
export function freeBytes(dir: string): number {
  const stats = statfsSync(dir);
  return Number(stats.bavail) * Number(stats.bsize);
}

export function formatGb(bytes: number): string {
  return `${(bytes / 1e9).toFixed(1)} GB`;
}

/**
 * A `workHold` for startCellAgent: re-measures at most every `everyMs` (default 10 s) and says
 * "disk_full: ..." while less than 1 GB is free. Logs once when the hold starts and once when it ends.
 */
export function diskFullHold(dataDir: string, log: (line: string) => void, options: { everyMs?: number; measure?: (dir: string) => number; nowMs?: () => number } = {}): () => string | null {
  const everyMs = options.everyMs ?? 10_000;
  const measure = options.measure ?? freeBytes;
  const nowMs = options.nowMs ?? Date.now;
  let checkedAtMs = -Infinity;
  let hold: string | null = null;
  return () => {
    if (nowMs() - checkedAtMs < everyMs) return hold;
    checkedAtMs = nowMs();
    let free: number;
    try {
      free = measure(dataDir);
    } catch {
      return hold;
    }
    const next = free < DISK_FAIL_BYTES
      ? `disk_full: only ${formatGb(free)} is free in ${dataDir}; the cell takes no new episodes until at least 1 GB is free (recordings are kept until the coordinator has them, so free space elsewhere or add disk)`
      : null;
    if (next && !hold) log(next);
    if (!next && hold) log(`disk space recovered (${formatGb(free)} free in ${dataDir}); the cell takes work again`);
    hold = next;
    return hold;
  };
}
