/**
 * A difference of two success rates as the console shows it: the sentence it supports first, in large
 * type, then a bar on the -100..+100 point scale with its interval and 0 marked, then each side's rate with
 * its Wilson interval and n. Used by a compare's or transfer's result (result.headline) and by the
 * compare page (GET /v1/comparisons); the words come from the API, so the console says what the CLI and
 * the PDF say.
 */
import { h, svg } from "./dom.js";
import { rateBar } from "./ui.js";

const level = (x) => `${Number((x * 100).toFixed(1))}%`;
const signedPoints = (x) => `${x > 0 ? "+" : ""}${Number((x * 100).toFixed(1))}`;
const SHOWN_WORDS = { a_higher: "first higher", b_higher: "second higher", none: "no difference shown" };

/** The interval of a difference on -1..1 as a bar, 0 marked: the eye sees at once whether it crosses 0. */
export function differenceBar({ diff, ci, ci_level: ciLevel, of, shown }) {
  const x = (d) => ((d + 1) / 2) * 100;
  const words = `${of ?? "difference"}: ${signedPoints(diff)} points, ${level(ciLevel)} interval ${signedPoints(ci[0])} to ${signedPoints(ci[1])} (${SHOWN_WORDS[shown] ?? shown})`;
  return h("div", { class: `difference difference-${shown}`, role: "group", "aria-label": words },
    h("span", { class: "difference-value" }, `${signedPoints(diff)} points`),
    h("span", { class: "rate-bar" }, svg("svg", { class: "bar", viewBox: "0 0 100 12", preserveAspectRatio: "none", "aria-hidden": "true", focusable: "false" },
      svg("rect", { class: "bar-track", x: 0, y: 5, width: 100, height: 2 }),
      svg("rect", { class: "bar-zero", x: 49.8, y: 0, width: 0.4, height: 12 }),
      svg("rect", { class: "bar-ci", x: x(ci[0]), y: 2, width: Math.max(0.4, x(ci[1]) - x(ci[0])), height: 8 }),
      svg("rect", { class: "bar-rate", x: Math.min(99.2, Math.max(0, x(diff) - 0.4)), y: 0, width: 0.8, height: 12 }))),
    h("span", { class: "difference-ci" }, `${level(ciLevel)} interval ${signedPoints(ci[0])} to ${signedPoints(ci[1])}`),
    h("span", { class: "difference-shown" }, SHOWN_WORDS[shown] ?? shown));
}

/** A side's rate with its Wilson interval and n (rateBar on the Wilson interval). */
export function sideBar(side) {
  return rateBar({ n: side.n, success_rate: side.success_rate, ci95: side.wilson95, interval_method: "Wilson" }, side.label);
}

/** A compare's or transfer's answer up front (result.headline): sentence, difference bar, the other lines, each side. */
export function headlineCard(headline) {
  return h("section", { class: "card comparison", "aria-labelledby": "h-comparison" },
    h("h2", { id: "h-comparison" }, `Comparison: ${headline.difference.of}`),
    h("p", { class: "claim", "data-shown": headline.difference.shown }, headline.sentence),
    differenceBar(headline.difference),
    headline.lines.slice(1, -1).map((line) => h("p", { class: "small" }, line)),
    h("h3", {}, "Each side"),
    h("div", { class: "rates" }, headline.arms.map(sideBar)));
}
