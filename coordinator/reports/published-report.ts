/**
 * A report as a leaderboard publishes it to anyone, without a key: the owner's report less its
 * cost, with no internal identifier: cells are numbered within the report ("cell 1", "cell 2", in the
 * report's own order) instead of named by their ids, and so are the account's uploaded models in
 * `resolved_pins.models` ("model 1", ...; their sha256 and size still pin them for a citation).
 */
import type { Report } from "./report.js";

export type PublishedReport = Omit<Report, "cost">;

/** `report` for the public: no cost, cells numbered. */
export function publishedReport(report: Report): PublishedReport {
  const { cost: _cost, ...rest } = report;
  const pins = rest.resolved_pins as Report["resolved_pins"] & { models?: Record<string, { id: string }> };
  const models = pins.models
    ? Object.fromEntries(Object.entries(pins.models).map(([name, model], i) => [name, { ...model, id: `model ${i + 1}` }]))
    : undefined;
  return {
    ...rest,
    ...(models ? { resolved_pins: { ...pins, models } } : {}),
    cells: { ...rest.cells, by_cell: rest.cells.by_cell.map((c, i) => ({ ...c, cell: `cell ${i + 1}` })) },
  };
}
