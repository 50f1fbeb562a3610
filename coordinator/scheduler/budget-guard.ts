/**
 * Live enforcement of money limits, used by the scheduler (AssignmentBudget) and the API.
 *
 * Per run (`max_budget_usd`): pending episodes are offered to cells in index order, each
 * estimated at its own unit's rates (runs/estimates.ts); an episode is assigned only when the
 * run's metered cost so far plus the estimates of every episode in flight plus those of the
 * pending episodes before it and its own stay within the cap. After every metered episode the run
 * is halted with `budget_exceeded` when its metered cost has reached the cap, or when nothing is
 * in flight and the next pending episode (at its unit's estimate) no longer fits.
 *
 * Per account (hard monthly budget): after every metered episode, and when the budget is changed,
 * every open run of an account whose month's usage has reached a hard budget is halted with
 * `monthly_budget_exceeded`.
 */
import type { FirmwarePins } from "../../firmware-pins/pins.js";
import type { RunLifecycle } from "../lifecycle/run-lifecycle.js";
import type { Db } from "../store/database.js";
import { getRun, type RunRecord } from "../store/runs-repo.js";
import { listOpenRunIdsOfAccount } from "../store/run-queries-repo.js";
import { roundCents, unitIndexOf, unitMeterContext, type MeterContext } from "../runs/meters.js";
import { isTerminal, type RunStatus } from "../domain/run-state.js";
import type { AssignmentBudget } from "./scheduler.js";
import { monthlyCapReached } from "../billing/budgets.js";
import { episodeEstimateUsd } from "../runs/estimates.js";
import { readRunMoney, readRunMoneyExactly, type RunMoneyRead } from "./run-money.js";
import { listPendingUnitsFrom } from "../store/episode-subsets-repo.js";

/** Pending episodes read at a time when the guard counts how many fit. */
const PENDING_PAGE = 256;

export interface BudgetGuardOptions {
  db: Db;
  /** Stops runs at their caps. */
  lifecycle: Pick<RunLifecycle, "end">;
  pins: FirmwarePins;
  now?: () => Date;
}

export interface BudgetGuard extends AssignmentBudget {
  /** Halts the account's open runs when its hard monthly budget is reached; returns how many. */
  checkAccount(accountId: string): Promise<number>;
}

interface RunMoney {
  accountId: string;
  status: RunStatus;
  maxBudgetUsd: number | undefined;
  spentUsd: number;
  /** Estimates of the episodes cells hold now. */
  inFlightUsd: number;
  /** Estimate of the pending episode of the lowest index; undefined when none is pending. */
  firstPendingUsd: number | undefined;
  /** Estimate of one episode of each unit, by unit index. */
  perEpisodeUsd: number[];
}

/** The money at each bound of the metered cost, and the exact money (read only when asked). */
interface MoneyBounds {
  low: RunMoney;
  high: RunMoney;
  exact(): Promise<RunMoney>;
}

/** Tolerance for comparing sums of unrounded estimates with a cap given in dollars. */
const EPSILON_USD = 1e-9;

/** How many of `estimates`, taken in order, fit in `roomUsd` (any subset of that prefix fits too). */
export function affordablePrefix(roomUsd: number, estimates: readonly number[]): number {
  let room = roomUsd;
  let count = 0;
  for (const estimate of estimates) {
    if (estimate > room + EPSILON_USD) break;
    room -= estimate;
    count += 1;
  }
  return count;
}

export function createBudgetGuard(options: BudgetGuardOptions): BudgetGuard {
  const { db, lifecycle, pins } = options;
  const halt = (runId: string, code: "budget_exceeded" | "monthly_budget_exceeded", message: string) => lifecycle.end(db, runId, { status: "stopped", code, message });
  const now = options.now ?? (() => new Date());

  /**
   * `on`: where to read: the database, or the caller's transaction (the scheduler's, under the run's
   * lock). `read`: the run as the caller just read it there, so that it is not read again. It reads
   * aggregates and bounded rows of the run's episodes (run-money.ts), not the episodes: it runs at
   * every assignment and every metered episode of a capped run. The metered cost comes as two bounds,
   * equal almost always: `low` and `high` are the money at each; a decision that differs between them
   * asks `exact()`, which meters the run's episodes as the Result does.
   */
  async function moneyOf(runId: string, on: Db = db, read?: RunRecord): Promise<MoneyBounds | undefined> {
    const run = read ?? await getRun(on, runId);
    if (!run) return undefined;
    const contexts: MeterContext[] = run.units.map((unit) => unitMeterContext(pins, unit, run.priority, `run ${run.id} unit ${unit.key}`));
    const perEpisodeUsd = contexts.map((context) => episodeEstimateUsd(run.plan, context));
    const max = run.request.max_budget_usd;
    const of = (money: RunMoneyRead): RunMoney => ({
      accountId: run.accountId, status: run.status, maxBudgetUsd: typeof max === "number" ? max : undefined, ...money, perEpisodeUsd,
    });
    const { spentLowUsd, spentHighUsd, ...rest } = await readRunMoney(on, runId, contexts, perEpisodeUsd);
    const low = of({ spentUsd: spentLowUsd, ...rest });
    const high = spentHighUsd === spentLowUsd ? low : of({ spentUsd: spentHighUsd, ...rest });
    return { low, high, exact: async () => (high === low ? low : of(await readRunMoneyExactly(on, runId, contexts, perEpisodeUsd))) };
  }

  /** A decision from the money: the same at both bounds is the decision at the exact cost, otherwise it is decided on `exact()`. */
  async function decide<T>(m: MoneyBounds, decision: (money: RunMoney) => T): Promise<T> {
    const atLow = decision(m.low);
    return m.high === m.low || decision(m.high) === atLow ? atLow : decision(await m.exact());
  }

  /** Whether `afterEpisodeMetered` halts the run at this money. */
  function haltsAt(m: RunMoney): boolean {
    if (isTerminal(m.status) || m.maxBudgetUsd === undefined) return false;
    return m.spentUsd >= m.maxBudgetUsd || (m.inFlightUsd === 0 && m.firstPendingUsd !== undefined && affordablePrefix(roomOf(m), [m.firstPendingUsd]) === 0);
  }

  function roomOf(m: RunMoney): number {
    return m.maxBudgetUsd === undefined ? Infinity : m.maxBudgetUsd - m.spentUsd - m.inFlightUsd;
  }

  /** How many of `next` (in order) fit in the run's room. */
  function allowanceOf(m: RunMoney, next: ReadonlyArray<{ unit?: number | null }>): number {
    if (m.maxBudgetUsd === undefined) return Infinity;
    return affordablePrefix(roomOf(m), next.map((e) => m.perEpisodeUsd[unitIndexOf(e)]));
  }

  /**
   * How many of the run's pending episodes, lowest index first, fit in its room: read a page at a time
   * until one does not fit, so a run of 10,000 pending episodes with room for three reads one page.
   */
  async function pendingAllowanceOf(m: RunMoney, runId: string, on: Db): Promise<number> {
    if (m.maxBudgetUsd === undefined) return Infinity;
    let room = roomOf(m);
    let count = 0;
    for (let from = 0; ;) {
      const page = await listPendingUnitsFrom(on, runId, from, PENDING_PAGE);
      const fits = affordablePrefix(room, page.map((e) => m.perEpisodeUsd[e.unit]));
      for (const e of page.slice(0, fits)) room -= m.perEpisodeUsd[e.unit];
      count += fits;
      if (fits < page.length || page.length < PENDING_PAGE) return count;
      from = page[page.length - 1].idx + 1;
    }
  }

  async function checkAccount(accountId: string): Promise<number> {
    const reached = await monthlyCapReached(db, pins, accountId, now());
    if (!reached) return 0;
    let halted = 0;
    for (const id of await listOpenRunIdsOfAccount(db, accountId)) if (await halt(id, "monthly_budget_exceeded", `run halted: ${reached}`)) halted += 1;
    return halted;
  }

  /**
   * The run's cap, without reading its episodes: most runs have none, and a run may have 10,000
   * episodes. The account and the cap never change: any record of the run (`known`) tells them.
   */
  async function capOf(runId: string, on: Db = db, known?: RunRecord): Promise<{ accountId: string; capped: boolean } | undefined> {
    const run = known ?? await getRun(on, runId);
    return run ? { accountId: run.accountId, capped: typeof run.request.max_budget_usd === "number" } : undefined;
  }

  return {
    async episodeAllowance(runId, next, on = db, run) {
      const cap = await capOf(runId, on, run);
      if (!cap) return 0;
      if (!cap.capped) return Infinity;
      const m = await moneyOf(runId, on, run);
      if (!m) return 0;
      return next ? await decide(m, (money) => allowanceOf(money, next)) : await pendingAllowanceOf(await m.exact(), runId, on);
    },
    async afterEpisodeMetered(runId, run, account) {
      const cap = await capOf(runId, db, run);
      if (!cap) return;
      // An account without a hard budget when the episode was metered has no monthly cap to check.
      const accountCapped = account?.hardBudget !== false;
      if (!cap.capped) {
        if (accountCapped) await checkAccount(cap.accountId);
        return;
      }
      const bounds = await moneyOf(runId);
      if (!bounds) return;
      // A higher cost halts sooner: no halt at the high bound is no halt; a halt's message names the exact cost.
      const m = haltsAt(bounds.high) ? await bounds.exact() : bounds.high;
      if (!isTerminal(m.status) && m.maxBudgetUsd !== undefined) {
        const cap = m.maxBudgetUsd.toFixed(2);
        if (m.spentUsd >= m.maxBudgetUsd) {
          await halt(runId, "budget_exceeded", `run halted at its max_budget_usd of $${cap}: $${m.spentUsd.toFixed(2)} metered; the partial result covers the episodes that ran`);
        } else if (m.inFlightUsd === 0 && m.firstPendingUsd !== undefined && affordablePrefix(roomOf(m), [m.firstPendingUsd]) === 0) {
          // Pending episodes are offered lowest index first: when the first no longer fits, none will be assigned.
          await halt(runId, "budget_exceeded",
            `run halted at its max_budget_usd of $${cap}: $${m.spentUsd.toFixed(2)} metered and the next episode may cost up to $${roundCents(m.firstPendingUsd).toFixed(2)}; the partial result covers the episodes that ran`);
        }
      }
      if (accountCapped) await checkAccount(m.accountId);
    },
    checkAccount,
  };
}
