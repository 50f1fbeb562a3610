/**
 * Quotes (POST /v1/quote): the price of a run body before it runs, valid for `QUOTE_VALIDITY_MS`.
 * n is the run's episode count; robot_hours and environment_hours are n x (max_duration_s +
 * RESET_ALLOWANCE_S), upper bounds for episodes that run once (billing/estimates.ts); cost_usd is
 * priced from them like a Result. A run submitted with `quote_id` must carry the quoted body.
 */
import type { FirmwarePins } from "../../firmware-pins/pins.js";
import { randomBase62 } from "../auth/api-keys.js";
import { AssayError } from "../errors/assay-error.js";
import { PRICE_LIST } from "../runs/price-list.js";
import { meterContextFor } from "../runs/run-results.js";
import type { ValidatedRun } from "../runs/validate-run.js";
import type { Db } from "../store/database.js";
import { canonicalJson } from "./canonical-json.js";
import { episodeEstimateS, priceSeconds, RESET_ALLOWANCE_S } from "./estimates.js";

/** How long a quote can back a submission: 15 minutes. */
export const QUOTE_VALIDITY_MS = 15 * 60_000;

/** Builds, stores and returns the Quote (wire shape) for a validated run body. */
export function createQuote(db: Db, pins: FirmwarePins, accountId: string, validated: ValidatedRun, now: Date, validityMs = QUOTE_VALIDITY_MS): Record<string, unknown> {
  const context = meterContextFor(pins, { id: "quote", plan: JSON.stringify(validated.plan), priority: validated.priority });
  const episodeS = episodeEstimateS(validated.plan);
  const meters = priceSeconds(validated.episodesTotal * episodeS, context);
  const id = `quote_${randomBase62(20)}`;
  const created = now.toISOString();
  const quote = {
    object: "quote",
    id,
    created,
    expires: new Date(now.getTime() + validityMs).toISOString(),
    n: validated.episodesTotal,
    robot_hours: meters.robotHours,
    environment_hours: meters.environmentHours,
    cost_usd: meters.costUsd,
    price: {
      tier: context.tier,
      environment_class: context.environmentClass,
      priority: context.priority,
      robot_hour_usd: PRICE_LIST.robotHourUsd[context.tier],
      environment_hour_usd: PRICE_LIST.environmentHourUsd[context.environmentClass],
      priority_multiplier: PRICE_LIST.priorityMultiplier[context.priority],
      episode_estimate_s: episodeS,
      max_duration_s: validated.plan.max_duration_s,
      reset_allowance_s: RESET_ALLOWANCE_S,
    },
    pins: validated.resolvedPins,
    max_budget_usd: (validated.request.max_budget_usd as number | undefined) ?? null,
  };
  db.prepare("INSERT INTO quotes (id, account_id, created, expires, request, quote) VALUES (?, ?, ?, ?, ?, ?)").run(
    id, accountId, created, quote.expires, canonicalJson(validated.request), JSON.stringify(quote),
  );
  return quote;
}

/**
 * Checks that `quoteId` may back a submission whose validated request is `request`: unknown to
 * the account -> 422; past `expires` -> 409 quote_expired; quoted for another body -> 422.
 * A quote may back any number of submissions until it expires.
 */
export function checkQuote(db: Db, accountId: string, quoteId: unknown, request: Record<string, unknown>, now: Date): void {
  if (typeof quoteId !== "string" || quoteId.length === 0) {
    throw new AssayError("contract_validation_failed", `quote_id must be the id of a quote from POST /v1/quote; got ${JSON.stringify(quoteId)}`);
  }
  const row = db.prepare("SELECT expires, request FROM quotes WHERE id = ? AND account_id = ?").get(quoteId, accountId) as { expires: string; request: string } | undefined;
  if (!row) throw new AssayError("contract_validation_failed", `quote_id ${JSON.stringify(quoteId)} is not a quote of this account; request one with POST /v1/quote`);
  if (now.getTime() > Date.parse(row.expires)) {
    throw new AssayError("quote_expired", `quote ${quoteId} expired at ${row.expires}; request a new quote with POST /v1/quote and resubmit with its id`);
  }
  if (canonicalJson(request) !== row.request) {
    throw new AssayError("contract_validation_failed", `quote ${quoteId} was made for a different run body; submit the quoted body unchanged, or request a new quote for this one`);
  }
}
