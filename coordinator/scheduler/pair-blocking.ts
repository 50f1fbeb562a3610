/**
 * Blocking by cell (paired compare, issue 25 item 4): both episodes of a pair run on the same cell,
 * so that the pair's difference is a within-cell difference and a cell effect the two policies share
 * cancels in it. A pure rule over one run's offered pending episodes:
 *
 * - an episode whose pair already has an episode on a cell (assigned, running or finished there) may
 *   go to that cell only, and waits for it while it is busy;
 * - if that cell is no longer connected, the episode goes to any fitting cell (the pair is then split
 *   over two cells, and the model-level rule leaves it out: it has no within-cell difference);
 * - of two pending episodes of one pair, the lower index goes first and the other waits for it.
 *
 * Episodes that carry no `block: "cell"` (other kinds, unpaired compare, runs planned before) pass
 * through unchanged.
 */
import type { EpisodeAssign } from "../domain/units.js";

export interface BlockedPairEpisode {
  id: string;
  idx: number;
  assign: EpisodeAssign;
}

export interface PairBlocking<E> {
  /** The episodes that may go out this pass, in the order given. */
  offered: E[];
  /** Episode id -> the only cell it may go to. */
  cellOf: Map<string, string>;
}

/**
 * Applies the rule to `pending` (lowest index first), given `pairCells` (pair -> cell holding or having
 * run an episode of it) and the ids of the connected cells.
 */
export function blockPairsByCell<E extends BlockedPairEpisode>(
  pending: readonly E[], pairCells: ReadonlyMap<number, string>, connected: ReadonlySet<string>,
): PairBlocking<E> {
  const offered: E[] = [];
  const cellOf = new Map<string, string>();
  const pairsOffered = new Set<number>();
  for (const e of pending) {
    const pair = e.assign.pair;
    if (e.assign.block !== "cell" || pair === undefined) {
      offered.push(e);
      continue;
    }
    const cell = pairCells.get(pair);
    if (cell !== undefined) {
      if (connected.has(cell)) cellOf.set(e.id, cell);
      offered.push(e);
      continue;
    }
    // Neither episode of the pair placed yet: the first offered goes; the other waits for its cell.
    if (pairsOffered.has(pair)) continue;
    pairsOffered.add(pair);
    offered.push(e);
  }
  return { offered, cellOf };
}
