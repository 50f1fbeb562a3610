/**
 * The money checks of POST /v1/runs, after the body validated: the quote it names (if any), the
 * account's hard monthly budget, and whether `max_budget_usd` can pay for the run's first episode
 * (at its unit's rates) at all.
 */
import type { FirmwarePins } from "../../firmware-pins/pins.js";
import { AssayError } from "../errors/assay-error.js";
import type { ValidatedRun } from "../runs/run-request.js";
import type { Db } from "../store/database.js";
import { monthlyCapReached } from "./budgets.js";
import { episodeEstimateS, episodeEstimateUsd } from "../runs/estimates.js";
import { checkQuote, validatedMeterContexts } from "./quotes.js";

/** Splits `quote_id` off a run body (the rest is validated as the run). */
export function splitQuoteId(body: unknown): { body: unknown; quoteId?: unknown } {
  if (typeof body !== "object" || body === null || Array.isArray(body) || !Object.hasOwn(body, "quote_id")) return { body };
  const { quote_id: quoteId, ...rest } = body as Record<string, unknown>;
  return { body: rest, quoteId };
}

/** Throws the AssayError that rejects this submission on money grounds, if any. */
export async function admitSubmission(db: Db, pins: FirmwarePins, accountId: string, validated: ValidatedRun, quoteId: unknown, now: Date): Promise<void> {
  if (quoteId !== undefined) await checkQuote(db, accountId, quoteId, validated.request, now);
  const reached = await monthlyCapReached(db, pins, accountId, now);
  if (reached) throw new AssayError("monthly_budget_exceeded", `run rejected: ${reached}`);
  const max = validated.request.max_budget_usd;
  if (typeof max === "number") {
    // The scheduler offers episodes in index order: the first one is the first that must fit.
    const context = validatedMeterContexts(pins, validated)[validated.episodes?.[0]?.unit ?? 0];
    const perEpisode = episodeEstimateUsd(validated.plan, context);
    if (perEpisode > max) {
      throw new AssayError("contract_validation_failed",
        `max_budget_usd ${max} cannot pay for one episode, which may cost up to $${perEpisode.toFixed(4)} (${episodeEstimateS(validated.plan)} s at ${context.tier}/${context.environmentClass}/${context.priority} rates); raise it to at least ${Math.ceil(perEpisode * 100) / 100}`);
    }
  }
}
