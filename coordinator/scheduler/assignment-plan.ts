/**
 * The scheduler's matching rule as a pure function: which pending episode goes to which idle cell.
 *
 * Runs are served in priority order (burst, standard, soak), then oldest first. A run's pending
 * episodes go out lowest index first, one per cell, spread over every idle cell whose robot model,
 * firmware and environment equal the run's plan. A cell gets at most one episode per pass (and the
 * caller only offers cells that hold none).
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
}

export interface AvailableCell {
  cellId: string;
  model: string;
  firmware: string;
  environment: string;
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
    const matching = free.filter(
      (c) => !taken.has(c.cellId) && c.model === run.model && c.firmware === run.firmware && c.environment === run.environment,
    );
    for (let i = 0; i < Math.min(matching.length, run.pendingEpisodeIds.length); i++) {
      taken.add(matching[i].cellId);
      plan.push({ runId: run.id, episodeId: run.pendingEpisodeIds[i], cellId: matching[i].cellId });
    }
  }
  return plan;
}
