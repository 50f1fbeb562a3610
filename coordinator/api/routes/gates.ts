/**
 * CI gates: POST /v1/gates, GET /v1/gates, GET /v1/gates/{gate_id}, POST /v1/gates/{gate_id}/checks
 * (starts an eval run of the gate's suite for one ref), GET /v1/gates/{gate_id}/checks/{check_id}
 * (what a CI job polls). See coordinator/kinds/gates.ts for the pass/fail rule.
 */
import { q } from "../../runs/field-checks.js";
import { Router } from "express";
import { authOf } from "../../auth/authenticate.js";
import { randomBase62 } from "../../auth/api-keys.js";
import { AssayError } from "../../errors/assay-error.js";
import {
  checkView, gateView, getCheck, getGate, insertCheck, insertGate, listGates, refMatches, type GateRecord, type GateSpec,
} from "../../kinds/gates.js";
import type { ValidatedRun } from "../../runs/run-request.js";
import { submitRun, validateSubmission } from "../../lifecycle/submit-run.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { CreateCheckRequest, CreateGateRequest } from "../schemas/gates.js";
import { parseBody } from "../validate-request.js";


function invalid(message: string): never {
  throw new AssayError("contract_validation_failed", message);
}

export function gatesRouter(deps: CompiledApiDeps, router: Router = Router()): Router {

  /** Validates an eval body exactly as POST /v1/runs would. */
  const evalBody = (spec: Pick<GateSpec, "suite" | "robots" | "policy">) => ({ kind: "eval", suite: spec.suite, robots: spec.robots, policy: spec.policy });
  const validateEval = async (accountId: string, spec: Pick<GateSpec, "suite" | "robots" | "policy">): Promise<ValidatedRun> =>
    await validateSubmission(deps, accountId, evalBody(spec));

  const requireGate = async (accountId: string, gateId: string): Promise<GateRecord> => {
    const gate = await getGate(deps.db, gateId);
    if (!gate || gate.account_id !== accountId) throw new AssayError("not_found", `no gate ${q(gateId)} on this account`);
    return gate;
  };

  router.post("/gates", async (req, res) => {
    const { accountId } = authOf(res);
    // A gate's robots are pins: an unusable list answers firmware_pin_unavailable, as an eval body would.
    const body = parseBody(CreateGateRequest, req.body, { codeOfField: { robots: "firmware_pin_unavailable" } });
    const spec: GateSpec = {
      suite: body.suite, repo: body.repo, ref_pattern: body.ref_pattern, policy: body.policy as Record<string, unknown>, robots: body.robots, baseline: body.baseline ?? "last_pass",
    };
    await validateEval(accountId, spec);
    const row: GateRecord = { id: `gate_${randomBase62(16)}`, account_id: accountId, created: deps.clock().toISOString(), spec };
    await insertGate(deps.db, row);
    res.status(201).json(gateView(row));
  });

  router.get("/gates", async (_req, res) => {
    res.json({ object: "list", url: "/v1/gates", data: (await listGates(deps.db, authOf(res).accountId)).map(gateView) });
  });

  router.get("/gates/:gateId", async (req, res) => {
    res.json(gateView(await requireGate(authOf(res).accountId, req.params.gateId)));
  });

  router.post("/gates/:gateId/checks", async (req, res) => {
    const { accountId } = authOf(res);
    const gate = await requireGate(accountId, req.params.gateId);
    const spec = gate.spec;
    const body = parseBody(CreateCheckRequest, req.body);
    if (!refMatches(spec.ref_pattern, body.ref)) invalid(`ref ${q(body.ref)} does not match the gate's ref_pattern ${q(spec.ref_pattern)}`);
    // The build under test: the check's policy (e.g. the image built from this commit), else the gate's.
    const checkId = `chk_${randomBase62(16)}`;
    // The check row commits with its eval run, so a check never names a run that does not exist.
    await submitRun(deps, accountId, evalBody({ ...spec, policy: (body.policy ?? spec.policy) as Record<string, unknown> }), {
      withinInsert: (tx, runId, created) => insertCheck(tx, {
        id: checkId, gate_id: gate.id, account_id: accountId, created, ref: body.ref, commit_sha: body.commit ?? null, run_id: runId,
      }),
    });
    res.status(201).json(checkView((await getCheck(deps.db, checkId))!, deps.urls.baseUrl));
  });

  router.get("/gates/:gateId/checks/:checkId", async (req, res) => {
    const { accountId } = authOf(res);
    const gate = await requireGate(accountId, req.params.gateId);
    const check = await getCheck(deps.db, req.params.checkId);
    if (!check || check.gate_id !== gate.id) throw new AssayError("not_found", `no check ${q(req.params.checkId)} on gate ${gate.id}`);
    // Decided when its eval run ends, whatever the ending (coordinator/kinds/eval.ts onEnded); a read never writes.
    res.json(checkView(check, deps.urls.baseUrl));
  });

  return router;
}
