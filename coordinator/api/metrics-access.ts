/**
 * /metrics when the coordinator listens beyond loopback: Prometheus scrapes it with a bearer key of
 * the operator account (any scope; `bearer_token` in the scrape config). Fleet and traffic figures
 * are not for customers or passers-by. On loopback it stays open.
 */
import type { NextFunction, Request, Response } from "express";
import type { ApiKeyCache } from "../auth/api-key-cache.js";
import { resolveBearer, type RejectedKeyLimit } from "../auth/authenticate.js";
import { CATALOG_ACCOUNT_ID } from "../tasks/task-catalog.js";
import { AssayError } from "../errors/assay-error.js";
import type { Db } from "../store/database.js";

export function metricsAccess(keys: Db | ApiKeyCache, access: "open" | "operator", rejectedKeys?: RejectedKeyLimit) {
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    if (access === "operator") {
      const auth = await resolveBearer(keys, req.get("authorization"), rejectedKeys && { limit: rejectedKeys, req });
      if (auth.accountId !== CATALOG_ACCOUNT_ID) throw new AssayError("insufficient_scope", "/metrics needs a key of the operator account when the coordinator listens beyond loopback");
    }
    next();
  };
}
