/**
 * Live enforcement of money limits, used by the scheduler (AssignmentBudget) and the API.
 *
 * Per run (`max_budget_usd`): an episode is assigned only when the run's metered cost so far plus
 * the estimate of every episode in flight plus this one's stays within the cap (estimate:
 * billing/estimates.ts). After every metered episode the run is halted with `budget_exceeded` when
 * its metered cost has reached the cap, or when nothing is in flight and the next pending episode
 * no longer fits.
 *
 * Per account (hard monthly budget): after every metered episode, and when the budget is changed,
 * every open run of an account whose month's usage has reached a hard budget is halted with
 * `monthly_budget_exceeded`.
 */
import type { FirmwarePins } from "../../firmware-pins/pins.js";
import { haltRun, type HaltContext } from "../runs/halt-run.js";
import { computeMeters, type MeterContext } from "../runs/meters.js";
import { meterContextFor } from "../runs/run-results.js";
import { isTerminal, type RunStatus } from "../runs/run-state.js";
import type { AssignmentBudget } from "../scheduler/scheduler.js";
import { listAllEpisodes } from "../store/episodes-repo.js";
import { monthlyCapReached } from "./budgets.js";
import { costOfSecondsUsd, episodeEstimateS } from "./estimates.js";

export interface BudgetGuardOptions {
  halt: HaltContext;
  pins: FirmwarePins;
  now?: () => Date;
}

export interface BudgetGuard extends AssignmentBudget {
  /** Halts the account's open runs when its hard monthly budget is reached; returns how many. */
  checkAccount(accountId: string): number;
}

interface RunMoney {
  accountId: string;
  status: RunStatus;
  maxBudgetUsd: number | undefined;
  spentUsd: number;
  perEpisodeUsd: number;
  inFlight: number;
  pending: number;
  context: MeterContext;
}

/** Tolerance for comparing sums of unrounded estimates with a cap given in dollars. */
const EPSILON_USD = 1e-9;

export function createBudgetGuard(options: BudgetGuardOptions): BudgetGuard {
  const { halt, pins } = options;
  const db = halt.db;
  const now = options.now ?? (() => new Date());

  function moneyOf(runId: string): RunMoney | undefined {
    const run = db.prepare("SELECT id, account_id, status, plan, priority, request FROM runs WHERE id = ?").get(runId) as
      | { id: string; account_id: string; status: RunStatus; plan: string; priority: string; request: string }
      | undefined;
    if (!run) return undefined;
    const context = meterContextFor(pins, run);
    const episodes = listAllEpisodes(db, runId);
    const max = (JSON.parse(run.request) as { max_budget_usd?: number }).max_budget_usd;
    return {
      accountId: run.account_id,
      status: run.status,
      maxBudgetUsd: typeof max === "number" ? max : undefined,
      spentUsd: computeMeters(episodes, context).costUsd,
      perEpisodeUsd: costOfSecondsUsd(episodeEstimateS(JSON.parse(run.plan) as { max_duration_s: number }), context),
      inFlight: episodes.filter((e) => e.status === "assigned" || e.status === "running").length,
      pending: episodes.filter((e) => e.status === "pending").length,
      context,
    };
  }

  function allowanceOf(m: RunMoney): number {
    if (m.maxBudgetUsd === undefined) return Infinity;
    const room = m.maxBudgetUsd - m.spentUsd - m.inFlight * m.perEpisodeUsd;
    return Math.max(0, Math.floor(room / m.perEpisodeUsd + EPSILON_USD));
  }

  function checkAccount(accountId: string): number {
    const reached = monthlyCapReached(db, pins, accountId, now());
    if (!reached) return 0;
    const open = db
      .prepare("SELECT id FROM runs WHERE account_id = ? AND status IN ('queued', 'scheduling', 'running') ORDER BY created, id")
      .all(accountId) as Array<{ id: string }>;
    let halted = 0;
    for (const { id } of open) if (haltRun(halt, id, "monthly_budget_exceeded", `run halted: ${reached}`)) halted += 1;
    return halted;
  }

  return {
    episodeAllowance(runId) {
      const m = moneyOf(runId);
      return m ? allowanceOf(m) : 0;
    },
    afterEpisodeMetered(runId) {
      const m = moneyOf(runId);
      if (!m) return;
      if (!isTerminal(m.status) && m.maxBudgetUsd !== undefined) {
        const cap = m.maxBudgetUsd.toFixed(2);
        if (m.spentUsd >= m.maxBudgetUsd) {
          haltRun(halt, runId, "budget_exceeded", `run halted at its max_budget_usd of $${cap}: $${m.spentUsd.toFixed(2)} metered; the partial result covers the episodes that ran`);
        } else if (m.inFlight === 0 && m.pending > 0 && allowanceOf(m) === 0) {
          haltRun(halt, runId, "budget_exceeded",
            `run halted at its max_budget_usd of $${cap}: $${m.spentUsd.toFixed(2)} metered and the next episode may cost up to $${m.perEpisodeUsd.toFixed(2)}; the partial result covers the episodes that ran`);
        }
      }
      checkAccount(m.accountId);
    },
    checkAccount,
  };
}
