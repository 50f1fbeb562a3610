/**
 * The people behind a run on real cells: the time they spent setting scenes (operator resets) and the
 * episodes they marked invalid. A leaf the run lifecycle adds to every Result and usage reads.
 *
 * - operator_time (present once any reset needed a person): `resets` counts the attempts whose reset
 *   waited for a person (finished, interrupted and invalidated attempts alike: the person's time was
 *   spent), each from the cell's `awaiting_reset` until the wait ended (confirmed, or the attempt
 *   aborted); `reset_s_total` their seconds; `reset_s_mean` per such reset; `reset_s_per_episode` the
 *   total over the episodes counted in n, the figure a lab plans staff with.
 * - invalidated (present once any episode was marked invalid): each invalid attempt with its reason.
 */
import type { InvalidReason } from "./invalid-reasons.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";

export interface OperatorTime {
  resets: number;
  reset_s_total: number;
  reset_s_mean: number;
  reset_s_per_episode: number;
}

export interface InvalidatedAttempt {
  episode_id: string;
  index: number;
  attempt: number;
  cell: string | null;
  reason: InvalidReason;
  note: string | null;
  outcome: "success" | "failure" | null;
  at: string;
}

const round1 = (s: number): number => Math.round(s * 10) / 10;

/** Seconds of each operator reset over these episodes' attempts (finished and not). */
export function operatorResetSeconds(episodes: ReadonlyArray<Pick<EpisodeRecord, "status" | "operatorResetS" | "interruptions">>): number[] {
  const seconds: number[] = [];
  for (const e of episodes) {
    if (e.status === "done" && e.operatorResetS) seconds.push(e.operatorResetS);
    for (const i of e.interruptions) if (i.operator_reset_s) seconds.push(i.operator_reset_s);
  }
  return seconds;
}

/** The Result's operator sections; empty when no person was involved. */
export function operatorSections(episodes: readonly EpisodeRecord[]): { operator_time?: OperatorTime; invalidated?: InvalidatedAttempt[] } {
  const seconds = operatorResetSeconds(episodes);
  const total = seconds.reduce((sum, s) => sum + s, 0);
  const counted = episodes.filter((e) => e.status === "done").length;
  const invalidated = episodes.flatMap((e) => e.interruptions.flatMap((i) => (i.invalidated
    ? [{ episode_id: e.id, index: e.idx, attempt: i.attempt, cell: i.cell, reason: i.invalidated.reason, note: i.invalidated.note, outcome: i.invalidated.outcome, at: i.at }]
    : [])));
  invalidated.sort((a, b) => a.at.localeCompare(b.at) || a.index - b.index);
  return {
    ...(seconds.length > 0
      ? { operator_time: { resets: seconds.length, reset_s_total: round1(total), reset_s_mean: round1(total / seconds.length), reset_s_per_episode: counted === 0 ? 0 : round1(total / counted) } }
      : {}),
    ...(invalidated.length > 0 ? { invalidated } : {}),
  };
}
