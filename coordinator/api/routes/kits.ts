/**
 * /v1/kits: customer object kits. Customers register kits (runs:write) and read them (runs:read);
 * technicians move them on (receive, track, make-available) with a keys:admin key of the operator
 * account `acct_assay`, since the spec's scopes are fixed and have no technician scope.
 */
import { q } from "../../runs/field-checks.js";
import { Router, type Request, type Response } from "express";
import { authOf } from "../../auth/authenticate.js";
import { randomBase62 } from "../../auth/api-keys.js";
import { CATALOG_ACCOUNT_ID } from "../../tasks/task-catalog.js";
import { AssayError } from "../../errors/assay-error.js";
import type { KitOperation } from "../../domain/kit-state.js";
import { kitView } from "../../kits/kit-view.js";
import { advanceKit, findKitByName, getKit, insertKit, listKits, type KitRecord, type KitTracking } from "../../store/kits-repo.js";
import { signLabelUrl } from "../../kits/label-url.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { CreateKitRequest, KitTracking as KitTrackingBody } from "../schemas/kits.js";
import { parseBody } from "../validate-request.js";
import { requireNoBody } from "./tasks.js";

/** The account whose keys:admin keys act as technicians on any account's kits. */
export const OPERATOR_ACCOUNT_ID = CATALOG_ACCOUNT_ID;
export const KIT_NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;


function invalid(message: string): never {
  throw new AssayError("contract_validation_failed", message);
}

export function kitsRouter(deps: CompiledApiDeps, router: Router = Router()): Router {

  const requireOwnKit = async (res: Response, kitId: string): Promise<KitRecord> => {
    const row = await getKit(deps.db, kitId);
    if (!row || row.account_id !== authOf(res).accountId) throw new AssayError("not_found", `no kit ${q(kitId)} on this account`);
    return row;
  };

  router.post("/kits", async (req, res) => {
    const { accountId } = authOf(res);
    const kit = parseBody(CreateKitRequest, req.body);
    const existing = await findKitByName(deps.db, accountId, kit.name);
    if (existing) invalid(`this account already has a kit named ${q(kit.name)} (${existing.id}, ${existing.status}); kit names are unique per account`);
    const id = `kit_${randomBase62(16)}`;
    await insertKit(deps.db, { id, accountId, name: kit.name, items: kit.items, created: deps.clock().toISOString() });
    res.status(201).json(kitView((await getKit(deps.db, id))!, deps.urls.baseUrl));
  });

  router.get("/kits", async (_req, res) => {
    const data = (await listKits(deps.db, authOf(res).accountId)).map((row) => kitView(row, deps.urls.baseUrl));
    res.json({ object: "list", url: "/v1/kits", data });
  });

  router.get("/kits/:kitId", async (req, res) => {
    res.json(kitView(await requireOwnKit(res, req.params.kitId), deps.urls.baseUrl));
  });

  router.get("/kits/:kitId/shipping-label", async (req, res) => {
    const kit = await requireOwnKit(res, req.params.kitId);
    res.json(await signLabelUrl(deps.db, deps.urls.baseUrl, kit.id, deps.clock()));
  });

  const technician = (op: KitOperation, parse: (req: Request) => KitTracking | undefined) => async (req: Request, res: Response) => {
    const { accountId } = authOf(res);
    if (accountId !== OPERATOR_ACCOUNT_ID) {
      throw new AssayError("insufficient_scope", `POST /v1/kits/{kit_id}/${op} is a technician operation: it needs a keys:admin key of the operator account ${OPERATOR_ACCOUNT_ID}`);
    }
    const tracking = parse(req);
    const row = await advanceKit(deps.db, req.params.kitId as string, op, deps.clock().toISOString(), tracking);
    if (!row) throw new AssayError("not_found", `no kit ${q(req.params.kitId)}`);
    res.json(kitView(row, deps.urls.baseUrl));
  };
  router.post("/kits/:kitId/receive", technician("receive", (req) => { requireNoBody(req, "receive"); return undefined; }));
  router.post("/kits/:kitId/track", technician("track", (req) => parseBody(KitTrackingBody, req.body) as KitTracking));
  router.post("/kits/:kitId/make-available", technician("make-available", (req) => { requireNoBody(req, "make-available"); return undefined; }));

  return router;
}
