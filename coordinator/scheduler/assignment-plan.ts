/**
 * The scheduler's matching rule as a pure function: which pending episode goes to which idle cell.
 *
 * Runs are served in priority order (burst, standard, soak), then oldest first. A run's pending
 * episodes go out lowest index first, one per cell, spread over every idle cell whose robot model,
 * firmware and environment equal the run's plan. A cell gets at most one episode per pass (and the
 * caller only offers cells that hold none).
 *
 * A run of several units (coordinator/domain/units.ts) gives each pending episode its own pin in
 * `episodePins`; such an episode goes to a free cell matching that pin, and the run gets at most
 * `limit` assignments per pass (its budget allowance).
 *
 * An episode whose pin lists `instruments` (the kinds its task's predicates read) goes only to a cell
 * that has every one of them answering now; a cell that does not say (`instruments` absent) is not
 * filtered.
 *
 * An episode of a container policy (`image` in its pin) prefers, among the free cells that fit, one
 * that lists the image (its agent's `policy_images`): the lowest such cell id, else the lowest fitting one.
 *
 * An episode whose pin names a `cellId` (the second episode of a paired compare's pair, blocked by
 * cell) goes to that cell only.
 */

export const PRIORITY_ORDER = ["burst", "standard", "soak"] as const;

export interface SchedulableRun {
  id: string;
  priority: string;
  /** ISO timestamp; ties broken by id. */
  created: string;
  model: string;
  firmware: string;
  environment: string;
  /** Pending episode ids, lowest index first. */
  pendingEpisodeIds: string[];
  /** Per-episode pin of a multi-unit run; an episode not listed uses the run's. */
  episodePins?: Record<string, CellPin>;
  /** At most this many assignments for the run in one pass; default unlimited. */
  limit?: number;
  /** A container policy's image: cells that list it are preferred. */
  image?: string;
}

export interface CellPin {
  model: string;
  firmware: string;
  environment: string;
  /** Instrument kinds the episode's task reads; default none. */
  instruments?: readonly string[];
  /** A container policy's image: cells that list it are preferred. */
  image?: string;
  /** The only cell the episode may go to (its pair's other episode ran there). */
  cellId?: string;
}

export interface AvailableCell {
  cellId: string;
  model: string;
  firmware: string;
  environment: string;
  /** Instrument kinds answering on the cell now; absent: not filtered by instruments. */
  instruments?: readonly string[];
  /** The policy images the cell lists (its Hello's policy_images). */
  images?: readonly string[];
}

/** Whether `cell` matches `pin`: same robot, firmware and environment, the pin's cell if it names one, and every instrument the pin reads. */
export function cellFits(cell: AvailableCell, pin: CellPin): boolean {
  if (cell.model !== pin.model || cell.firmware !== pin.firmware || cell.environment !== pin.environment) return false;
  if (pin.cellId !== undefined && cell.cellId !== pin.cellId) return false;
  return cell.instruments === undefined || (pin.instruments ?? []).every((kind) => cell.instruments!.includes(kind));
}

export interface PlannedAssignment {
  runId: string;
  episodeId: string;
  cellId: string;
}

function priorityRank(priority: string): number {
  const rank = (PRIORITY_ORDER as readonly string[]).indexOf(priority);
  return rank === -1 ? PRIORITY_ORDER.length : rank;
}

/** Orders runs the way the scheduler serves them. */
export function compareRuns(a: Pick<SchedulableRun, "priority" | "created" | "id">, b: Pick<SchedulableRun, "priority" | "created" | "id">): number {
  return priorityRank(a.priority) - priorityRank(b.priority) || a.created.localeCompare(b.created) || a.id.localeCompare(b.id);
}

export function planAssignments(runs: readonly SchedulableRun[], cells: readonly AvailableCell[]): PlannedAssignment[] {
  const free = [...cells].sort((a, b) => a.cellId.localeCompare(b.cellId));
  const taken = new Set<string>();
  const plan: PlannedAssignment[] = [];
  for (const run of [...runs].sort(compareRuns)) {
    let left = run.limit ?? Infinity;
    for (const episodeId of run.pendingEpisodeIds) {
      if (left <= 0) break;
      const pin = run.episodePins?.[episodeId] ?? run;
      // Lowest free matching cell id first: for a single-pin run this is the i-th matching cell.
      const fits = (c: AvailableCell) => !taken.has(c.cellId) && cellFits(c, pin);
      const image = pin.image;
      const cell = (image !== undefined ? free.find((c) => fits(c) && (c.images ?? []).includes(image)) : undefined) ?? free.find(fits);
      if (!cell) {
        if (!run.episodePins) break;
        continue;
      }
      taken.add(cell.cellId);
      left -= 1;
      plan.push({ runId: run.id, episodeId, cellId: cell.cellId });
    }
  }
  return plan;
}
