/**
 * The Result's stage funnel (result.stage_funnel, docs/failures.md): each stage of the task in order,
 * the episodes that reached it out of those that report it drawn as a bar, and the failures that
 * stopped there (their last stage reached). Choosing a stage shows those failures in the grid.
 */
import { h } from "../dom.js";
import { pct } from "../format.js";

/** `onStage(name)` is called when a stage's stopped failures are chosen. */
export function funnelSection(result, { onStage } = {}) {
  const rows = result.stage_funnel ?? [];
  if (rows.length === 0) return null;
  return h("section", { class: "card", "aria-labelledby": "h-funnel" },
    h("h2", { id: "h-funnel" }, "Stage funnel"),
    h("p", { class: "small muted" }, "Episodes that reached each stage of the task, in order, and the failures that stopped there."),
    h("ol", { class: "funnel" }, rows.map((row) => {
      const share = row.of === 0 ? 0 : row.reached / row.of;
      return h("li", { class: "funnel-row", "data-stage": row.stage },
        h("span", { class: "funnel-stage" }, row.stage),
        h("meter", { class: "funnel-bar", min: 0, max: Math.max(1, row.of), value: row.reached, "aria-hidden": "true" }),
        h("span", { class: "funnel-count" }, `${row.reached} of ${row.of} (${pct(share)})`),
        h("span", { class: "funnel-stopped" }, row.stopped > 0 && onStage
          ? h("button", { type: "button", class: "link", on: { click: () => onStage(row.stage) } }, `${row.stopped} failure${row.stopped === 1 ? "" : "s"} stopped here`)
          : `${row.stopped} failure${row.stopped === 1 ? "" : "s"} stopped here`));
    })));
}
