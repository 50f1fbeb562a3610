/**
 * A report as a leaderboard publishes it to anyone, without a key: the owner's report less its
 * cost, with no internal identifier of the fleet: cells are numbered within the report ("cell 1",
 * "cell 2", in the report's own order) instead of named by their ids.
 */
import type { Report } from "./report.js";

export type PublishedReport = Omit<Report, "cost">;

/** `report` for the public: no cost, cells numbered. */
export function publishedReport(report: Report): PublishedReport {
  const { cost: _cost, ...rest } = report;
  return {
    ...rest,
    cells: { ...rest.cells, by_cell: rest.cells.by_cell.map((c, i) => ({ ...c, cell: `cell ${i + 1}` })) },
  };
}
