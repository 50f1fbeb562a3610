/** How figures read on the page: dates in the viewer's time zone, rates as percentages, money in USD. */
import { h } from "./dom.js";

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
const dateTimeZone = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "long" });
const usd = new Intl.NumberFormat(undefined, { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 4 });
const decimal = new Intl.NumberFormat(undefined, { maximumFractionDigits: 3 });
const percent = new Intl.NumberFormat(undefined, { style: "percent", minimumFractionDigits: 1, maximumFractionDigits: 1 });
const meter = new Intl.NumberFormat(undefined, { maximumFractionDigits: 6 });

/** A `<time>` showing an API timestamp in the viewer's time zone; the full zone name on hover. */
export function when(iso) {
  if (!iso) return "—";
  const date = new Date(iso);
  return h("time", { datetime: iso, title: dateTimeZone.format(date) }, dateTime.format(date));
}

/** A rate 0..1 as "83.3%". */
export function pct(rate) {
  return rate === null || rate === undefined ? "—" : percent.format(rate);
}

/** US dollars. */
export function money(value) {
  return value === null || value === undefined ? "—" : usd.format(value);
}

/** A number with at most 3 decimals. */
export function num(value) {
  return value === null || value === undefined ? "—" : decimal.format(value);
}

/** Hours with up to 6 decimals (meters are rounded to 6 decimals). */
export function hours(value) {
  return value === null || value === undefined ? "—" : `${meter.format(value)} h`;
}

/** Seconds as "20.0 s". */
export function seconds(value) {
  return value === null || value === undefined ? "—" : `${value.toFixed(1)} s`;
}

/** The current UTC month as YYYY-MM (usage periods are UTC months). */
export function utcMonth(date = new Date()) {
  return date.toISOString().slice(0, 7);
}
