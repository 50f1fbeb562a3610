/**
 * /v1/kits: customer object kits. Customers register kits (runs:write) and read them (runs:read);
 * technicians move them on (receive, track, make-available) with a keys:admin key of the operator
 * account `acct_assay`, since the spec's scopes are fixed and have no technician scope.
 */
import { Router, type Request, type Response } from "express";
import { authOf } from "../../auth/authenticate.js";
import { randomBase62 } from "../../auth/api-keys.js";
import { CATALOG_ACCOUNT_ID } from "../../catalog/tasks.js";
import { AssayError } from "../../errors/assay-error.js";
import type { KitOperation } from "../../kits/kit-state.js";
import { kitView } from "../../kits/kit-view.js";
import { advanceKit, findKitByName, getKitRow, insertKit, listKitRows, type KitItem, type KitRow, type KitTracking } from "../../kits/kits-repo.js";
import { signLabelUrl } from "../../kits/label-url.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { requireNoBody } from "./tasks.js";

/** The account whose keys:admin keys act as technicians on any account's kits. */
export const OPERATOR_ACCOUNT_ID = CATALOG_ACCOUNT_ID;
export const KIT_NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

const q = (value: unknown): string => JSON.stringify(value) ?? "undefined";

function invalid(message: string): never {
  throw new AssayError("contract_validation_failed", message);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function rejectUnknownKeys(value: Record<string, unknown>, known: readonly string[]): void {
  for (const key of Object.keys(value)) if (!known.includes(key)) invalid(`unknown field ${key}; allowed: ${known.join(", ")}`);
}

function parseKitBody(body: unknown): { name: string; items: KitItem[] } {
  if (!isPlainObject(body)) invalid(`request body must be a JSON object {name, items}; got ${q(body)}`);
  rejectUnknownKeys(body, ["name", "items"]);
  const { name, items } = body;
  if (typeof name !== "string" || !KIT_NAME_PATTERN.test(name) || name.length > 64) {
    invalid(`name is required: 1..64 characters of a-z, 0-9 and single hyphens (tasks reference it as "kit/<name>"); got ${q(name)}`);
  }
  if (!Array.isArray(items) || items.length === 0) invalid(`items is required: a non-empty array of {desc, qty}; got ${q(items)}`);
  return {
    name,
    items: items.map((item, i) => {
      if (!isPlainObject(item)) invalid(`items[${i}] must be an object {desc, qty}; got ${q(item)}`);
      rejectUnknownKeys(item, ["desc", "qty"]);
      if (typeof item.desc !== "string" || item.desc.trim() === "") invalid(`items[${i}].desc must be a non-empty string; got ${q(item.desc)}`);
      if (!(Number.isInteger(item.qty) && (item.qty as number) > 0)) invalid(`items[${i}].qty must be a positive integer; got ${q(item.qty)}`);
      return { desc: item.desc, qty: item.qty as number };
    }),
  };
}

function parseTracking(body: unknown): KitTracking {
  if (!isPlainObject(body)) invalid(`request body must be a JSON object {mocap_markers, mass_g, mesh_scan}; got ${q(body)}`);
  rejectUnknownKeys(body, ["mocap_markers", "mass_g", "mesh_scan", "dimensions_mm"]);
  const { mocap_markers: markers, mass_g: massG, mesh_scan: meshScan, dimensions_mm: dimensionsMm } = body;
  if (!(Number.isInteger(markers) && (markers as number) >= 3)) invalid(`mocap_markers must be an integer >= 3 (a rigid body needs three markers); got ${q(markers)}`);
  if (!(typeof massG === "number" && Number.isFinite(massG) && massG > 0)) invalid(`mass_g must be a positive number of grams; got ${q(massG)}`);
  if (typeof meshScan !== "boolean") invalid(`mesh_scan must be true or false; got ${q(meshScan)}`);
  if (dimensionsMm !== undefined && !(Array.isArray(dimensionsMm) && dimensionsMm.length === 3
    && dimensionsMm.every((v) => typeof v === "number" && Number.isFinite(v) && v > 0 && v <= 1000))) {
    invalid(`dimensions_mm must be [x, y, z]: three numbers of millimetres, each > 0 and <= 1000 (the box the simulated world models the kit as); got ${q(dimensionsMm)}`);
  }
  return {
    mocap_markers: markers as number, mass_g: massG, mesh_scan: meshScan,
    ...(dimensionsMm !== undefined ? { dimensions_mm: dimensionsMm as [number, number, number] } : {}),
  };
}

export function kitsRouter(deps: CompiledApiDeps): Router {
  const router = Router();

  const requireOwnKit = (res: Response, kitId: string): KitRow => {
    const row = getKitRow(deps.db, kitId);
    if (!row || row.account_id !== authOf(res).accountId) throw new AssayError("not_found", `no kit ${q(kitId)} on this account`);
    return row;
  };

  router.post("/kits", (req, res) => {
    const { accountId } = authOf(res);
    const kit = parseKitBody(req.body);
    const existing = findKitByName(deps.db, accountId, kit.name);
    if (existing) invalid(`this account already has a kit named ${q(kit.name)} (${existing.id}, ${existing.status}); kit names are unique per account`);
    const id = `kit_${randomBase62(16)}`;
    insertKit(deps.db, { id, accountId, name: kit.name, items: kit.items, created: deps.clock().toISOString() });
    res.status(201).json(kitView(getKitRow(deps.db, id)!, deps.urls.baseUrl));
  });

  router.get("/kits", (_req, res) => {
    const data = listKitRows(deps.db, authOf(res).accountId).map((row) => kitView(row, deps.urls.baseUrl));
    res.json({ object: "list", url: "/v1/kits", data });
  });

  router.get("/kits/:kitId", (req, res) => {
    res.json(kitView(requireOwnKit(res, req.params.kitId), deps.urls.baseUrl));
  });

  router.get("/kits/:kitId/shipping-label", (req, res) => {
    const kit = requireOwnKit(res, req.params.kitId);
    res.json(signLabelUrl(deps.db, deps.urls.baseUrl, kit.id, deps.clock()));
  });

  const technician = (op: KitOperation, parse: (req: Request) => KitTracking | undefined) => (req: Request, res: Response) => {
    const { accountId } = authOf(res);
    if (accountId !== OPERATOR_ACCOUNT_ID) {
      throw new AssayError("insufficient_scope", `POST /v1/kits/{kit_id}/${op} is a technician operation: it needs a keys:admin key of the operator account ${OPERATOR_ACCOUNT_ID}`);
    }
    const tracking = parse(req);
    const row = advanceKit(deps.db, req.params.kitId as string, op, deps.clock().toISOString(), tracking);
    if (!row) throw new AssayError("not_found", `no kit ${q(req.params.kitId)}`);
    res.json(kitView(row, deps.urls.baseUrl));
  };
  router.post("/kits/:kitId/receive", technician("receive", (req) => { requireNoBody(req, "receive"); return undefined; }));
  router.post("/kits/:kitId/track", technician("track", (req) => parseTracking(req.body)));
  router.post("/kits/:kitId/make-available", technician("make-available", (req) => { requireNoBody(req, "make-available"); return undefined; }));

  return router;
}
