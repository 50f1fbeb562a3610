/**
 * Quotes (POST /v1/quote): the price of a run body before it runs, valid for `QUOTE_VALIDITY_MS`.
 * Priced per unit, like the Result: each unit's episodes are n_unit x (max_duration_s +
 * RESET_ALLOWANCE_S) of occupancy (upper bounds for episodes that run once, runs/estimates.ts)
 * priced at that unit's tier and environment class as one billing line; the quote's n, hours and
 * cost are the sums of the lines (the rounding rule of coordinator/runs/meters.ts). Kind `run` is
 * one unit. A threshold run makes its episodes one at a time, so it is quoted at its planned
 * maximum: `episodes` (max per phase) on each of its two units (`n_basis: "maximum"`). A run
 * submitted with `quote_id` must carry the quoted body.
 */
import type { FirmwarePins } from "../../firmware-pins/pins.js";
import { randomBase62 } from "../auth/api-keys.js";
import { AssayError } from "../errors/assay-error.js";
import { runMeterContexts, sumMeters, type MeterContext } from "../runs/meters.js";
import { PRICE_LIST } from "../runs/price-list.js";
import type { ValidatedRun } from "../runs/run-request.js";
import type { Db } from "../store/database.js";
import { findQuoteOfAccount, insertQuote } from "../store/quotes-repo.js";
import { canonicalJson } from "../json/canonical-json.js";
import { withoutLabels } from "../runs/run-labels.js";
import { episodeEstimateS, priceSeconds, RESET_ALLOWANCE_S } from "../runs/estimates.js";
import { kindModule } from "../kinds/registry.js";

/** How long a quote can back a submission: 15 minutes. */
export const QUOTE_VALIDITY_MS = 15 * 60_000;

/** The rate contexts of a validated (not yet stored) run, by unit index. */
export function validatedMeterContexts(pins: FirmwarePins, validated: Pick<ValidatedRun, "plan" | "priority" | "units">): MeterContext[] {
  // Kind `run` plans no units: its one unit is its plan.
  const units = validated.units ?? [{ key: "run", model: validated.plan.model, environment: validated.plan.environment }];
  return runMeterContexts(pins, { id: "new run", priority: validated.priority, units });
}

/**
 * Episodes a validated run will make per unit: the planned ones, or for a kind that makes them as
 * it goes (threshold) the planned maximum.
 */
export function plannedEpisodesPerUnit(validated: Pick<ValidatedRun, "kind" | "plan" | "units" | "episodes" | "episodesTotal">): { perUnit: number[]; basis: "planned" | "maximum" } {
  const units = validated.units ?? [];
  if (units.length === 0) return { perUnit: [validated.episodesTotal], basis: "planned" };
  const ceiling = kindModule(validated.kind).episodeCeilingPerUnit;
  if (ceiling) {
    const max = ceiling(validated.plan) ?? validated.episodesTotal;
    return { perUnit: units.map(() => max), basis: "maximum" };
  }
  const perUnit = units.map(() => 0);
  for (const episode of validated.episodes ?? []) perUnit[episode.unit] += 1;
  return { perUnit, basis: "planned" };
}

/** Builds, stores and returns the Quote (wire shape) for a validated run body. */
export async function createQuote(db: Db, pins: FirmwarePins, accountId: string, validated: ValidatedRun, now: Date, validityMs = QUOTE_VALIDITY_MS): Promise<Record<string, unknown>> {
  const contexts = validatedMeterContexts(pins, validated);
  const episodeS = episodeEstimateS(validated.plan);
  const { perUnit, basis } = plannedEpisodesPerUnit(validated);
  const described = validated.units ?? [{ key: `${validated.resolvedPins.robot}/${validated.resolvedPins.environment}`, robot: validated.resolvedPins.robot, environment: validated.resolvedPins.environment }];
  const lines = contexts.map((context, unit) => ({ unit, context, n: perUnit[unit], meters: priceSeconds(perUnit[unit] * episodeS, context) }));
  const total = sumMeters(lines.map((l) => l.meters));
  // One rate for the whole run when every unit shares it; null when units differ (see `units`).
  const same = <T>(pick: (c: MeterContext) => T): T | null => (contexts.every((c) => pick(c) === pick(contexts[0])) ? pick(contexts[0]) : null);
  const tier = same((c) => c.tier);
  const environmentClass = same((c) => c.environmentClass);
  const priority = contexts[0].priority;
  const id = `quote_${randomBase62(20)}`;
  const created = now.toISOString();
  const quote = {
    object: "quote",
    id,
    created,
    expires: new Date(now.getTime() + validityMs).toISOString(),
    n: perUnit.reduce((sum, n) => sum + n, 0),
    n_basis: basis,
    robot_hours: total.robotHours,
    environment_hours: total.environmentHours,
    cost_usd: total.costUsd,
    price: {
      tier,
      environment_class: environmentClass,
      priority,
      robot_hour_usd: tier === null ? null : PRICE_LIST.robotHourUsd[tier],
      environment_hour_usd: environmentClass === null ? null : PRICE_LIST.environmentHourUsd[environmentClass],
      priority_multiplier: PRICE_LIST.priorityMultiplier[priority],
      episode_estimate_s: episodeS,
      max_duration_s: validated.plan.max_duration_s,
      reset_allowance_s: RESET_ALLOWANCE_S,
    },
    units: lines.map((line) => ({
      key: described[line.unit].key,
      robot: described[line.unit].robot,
      environment: described[line.unit].environment,
      n: line.n,
      tier: line.context.tier,
      environment_class: line.context.environmentClass,
      robot_hour_usd: PRICE_LIST.robotHourUsd[line.context.tier],
      environment_hour_usd: PRICE_LIST.environmentHourUsd[line.context.environmentClass],
      robot_hours: line.meters.robotHours,
      environment_hours: line.meters.environmentHours,
      cost_usd: line.meters.costUsd,
    })),
    pins: validated.resolvedPins,
    max_budget_usd: (validated.request.max_budget_usd as number | undefined) ?? null,
  };
  await insertQuote(db, { id, account_id: accountId, created, expires: quote.expires, request: canonicalJson(withoutLabels(validated.request)), quote: JSON.stringify(quote) });
  return quote;
}

/**
 * Checks that `quoteId` may back a submission whose validated request is `request`: unknown to
 * the account -> 422; past `expires` -> 409 quote_expired; quoted for another body -> 422.
 * A quote may back any number of submissions until it expires.
 */
export async function checkQuote(db: Db, accountId: string, quoteId: unknown, request: Record<string, unknown>, now: Date): Promise<void> {
  if (typeof quoteId !== "string" || quoteId.length === 0) {
    throw new AssayError("contract_validation_failed", `quote_id must be the id of a quote from POST /v1/quote; got ${JSON.stringify(quoteId)}`);
  }
  const row = await findQuoteOfAccount(db, accountId, quoteId);
  if (!row) throw new AssayError("contract_validation_failed", `quote_id ${JSON.stringify(quoteId)} is not a quote of this account; request one with POST /v1/quote`);
  if (now.getTime() > Date.parse(row.expires)) {
    throw new AssayError("quote_expired", `quote ${quoteId} expired at ${row.expires}; request a new quote with POST /v1/quote and resubmit with its id`);
  }
  // A name and metadata change neither the run nor its price: a quote backs the body with any labels.
  if (canonicalJson(withoutLabels(request)) !== row.request) {
    throw new AssayError("contract_validation_failed", `quote ${quoteId} was made for a different run body; submit the quoted body unchanged, or request a new quote for this one`);
  }
}
