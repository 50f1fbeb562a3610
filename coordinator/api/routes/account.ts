/**
 * GET /v1/account and PUT /v1/account (keys:admin): the account's leaderboard opt-in and the
 * display name its published results appear under. Opting out hides its entries from every board at
 * once (boards are read from the runs); the runs and their results stay. Opting in the first time
 * needs a display name.
 */
import { Router } from "express";
import { authOf } from "../../auth/authenticate.js";
import { AssayError } from "../../errors/assay-error.js";
import { getAccount, setLeaderboardSettings, type AccountRow } from "../../store/accounts-repo.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { UpdateAccountRequest } from "../schemas/account.js";
import { parseBody } from "../validate-request.js";

export function accountView(row: AccountRow) {
  return {
    object: "account" as const,
    id: row.id,
    name: row.name,
    created: row.created,
    leaderboard: { opt_in: row.leaderboard_opt_in === 1, display_name: row.leaderboard_name },
  };
}

export function accountRouter(deps: CompiledApiDeps, router: Router = Router()): Router {

  router.get("/account", async (_req, res) => {
    res.json(accountView((await getAccount(deps.db, authOf(res).accountId))!));
  });

  router.put("/account", async (req, res) => {
    const { accountId } = authOf(res);
    const { leaderboard } = parseBody(UpdateAccountRequest, req.body);
    const current = (await getAccount(deps.db, accountId))!;
    if (leaderboard.opt_in && !leaderboard.display_name && !current.leaderboard_name) {
      throw new AssayError("contract_validation_failed", "leaderboard.display_name is required to opt in: the name your published results appear under");
    }
    await setLeaderboardSettings(deps.db, accountId, leaderboard.opt_in, leaderboard.display_name ?? null);
    res.json(accountView((await getAccount(deps.db, accountId))!));
  });

  return router;
}
