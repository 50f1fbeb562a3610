/**
 * Cells waiting on a person, for the fleet page: what they need in words, how long they have waited,
 * and the order that puts them first. No DOM, so a unit test reads it as it is.
 */

/** What a waiting cell needs from a person, in words. */
export const NEEDS_WORDS = { reset: "Set the scene", label: "Judge the finished episode", intervene: "Help the paused episode" };

/** A wait as "45 s", "3 min 20 s" or "1 h 5 min". */
export function waited(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** Cells waiting on a person first, longest waiting first; the others keep the list's order. */
export function needingFirst(cells) {
  const waiting = cells.filter((c) => c.attention).sort((a, b) => a.attention.since.localeCompare(b.attention.since) || a.id.localeCompare(b.id));
  return [...waiting, ...cells.filter((c) => !c.attention)];
}
