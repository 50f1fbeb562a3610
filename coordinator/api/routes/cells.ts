/**
 * /v1/cells: enrolling cell agents (POST, the token is shown once), the fleet as the coordinator sees
 * it (GET, never tokens), and revocation (DELETE: the token is refused from then on and an open
 * CellLink stream is cut at once). keys:admin of the operator account (acct_assay, whose key the first
 * start prints as the operator key); no customer account's key may add hardware to the fleet, the
 * quick start's own admin key (acct_default) included.
 */
import { q } from "../../runs/field-checks.js";
import { Router, type Response } from "express";
import { authOf } from "../../auth/authenticate.js";
import { AssayError } from "../../errors/assay-error.js";
import { enrollCell, revokeCell } from "../../fleet/enrollment.js";
import type { ConnectedCell, FleetView } from "../../fleet/fleet-view.js";
import { LinkError } from "../../errors/link-errors.js";
import { getCell, listCells, type CellRow } from "../../store/cells-repo.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { EnrollCellRequest } from "../schemas/cells.js";
import { parseBody } from "../validate-request.js";
import { OPERATOR_ACCOUNT_ID } from "./kits.js";

const FLEET_ACCOUNTS = new Set([OPERATOR_ACCOUNT_ID]);

/** The registry behind FleetView can cut a cell's stream; other FleetViews (tests) may not. */
type Disconnectable = FleetView & { session?(cellId: string): { close(error: LinkError): void } | undefined };


function requireFleetOperator(res: Response, what: string): void {
  const { accountId } = authOf(res);
  if (!FLEET_ACCOUNTS.has(accountId)) {
    throw new AssayError("insufficient_scope", `${what} is a fleet operation: it needs a keys:admin key of ${[...FLEET_ACCOUNTS].join(" or ")}`);
  }
}

/** The wire view of a cell: enrollment facts from the store, live state from the fleet. Never the token. */
export function cellView(row: CellRow, live: ConnectedCell | undefined, extra: { enrollment_token?: string } = {}) {
  return {
    object: "cell",
    id: row.id,
    model: row.model,
    ...extra,
    created: row.enrolled,
    revoked: row.revoked,
    connected: live !== undefined,
    state: live ? live.state : row.revoked ? "revoked" : "offline",
    firmware: live?.firmware ?? null,
    environment: live?.environment ?? null,
    episode_id: live?.episodeId ?? null,
    connected_at: live?.connectedAt ?? null,
    last_seen: row.last_seen,
    // Live when connected; otherwise as the last Hello reported them (null: never connected).
    instruments: live ? live.instruments.map(instrumentView) : instrumentsOfHello(row.hello),
    instruments_down: live ? (live.instrumentsDown ?? []).map(instrumentView) : [],
  };
}

function instrumentView(i: { kind: string; name: string }): { kind: string; name: string | null } {
  return { kind: i.kind, name: i.name || null };
}

function instrumentsOfHello(json: string | null): Array<{ kind: string; name: string | null }> | null {
  if (!json) return null;
  try {
    const hello = JSON.parse(json) as { instruments?: Array<{ kind?: unknown; name?: unknown }> };
    return Array.isArray(hello.instruments) ? hello.instruments.map((i) => instrumentView({ kind: String(i.kind), name: typeof i.name === "string" ? i.name : "" })) : null;
  } catch {
    return null;
  }
}

function parseEnrollment(body: unknown, models: readonly string[]): { cellId: string; model: string } {
  const { cell_id: cellId, model } = parseBody(EnrollCellRequest, body);
  if (!models.includes(model)) throw new AssayError("contract_validation_failed", `model must be a robot model of the catalog (${models.join(", ")}); got ${q(model)}`);
  return { cellId, model };
}

export function cellsRouter(deps: CompiledApiDeps): Router {
  const router = Router();
  const liveOf = (cellId: string) => deps.fleet.connectedCells().find((c) => c.cellId === cellId);

  router.post("/cells", (req, res) => {
    requireFleetOperator(res, "POST /v1/cells");
    const { cellId, model } = parseEnrollment(req.body, deps.pins.models.map((m) => m.id));
    // Enrolling an existing cell rotates its token (and lifts a revocation): the old token stops working.
    const token = enrollCell(deps.db, { cellId, model }, deps.clock);
    const fleet = deps.fleet as Disconnectable;
    fleet.session?.(cellId)?.close(new LinkError("token_unknown", `cell ${cellId} was re-enrolled; connect with the new token`));
    res.status(201).json(cellView(getCell(deps.db, cellId)!, undefined, { enrollment_token: token }));
  });

  router.get("/cells", (_req, res) => {
    requireFleetOperator(res, "GET /v1/cells");
    const live = new Map(deps.fleet.connectedCells().map((c) => [c.cellId, c]));
    res.json({ object: "list", url: "/v1/cells", data: listCells(deps.db).map((row) => cellView(row, live.get(row.id))) });
  });

  router.delete("/cells/:cellId", (req, res) => {
    requireFleetOperator(res, "DELETE /v1/cells/{cell_id}");
    const cellId = req.params.cellId;
    const row = getCell(deps.db, cellId);
    if (!row) throw new AssayError("not_found", `no enrolled cell ${q(cellId)}; list them with GET /v1/cells`);
    // Revoking twice keeps the first timestamp.
    if (!row.revoked) revokeCell(deps.db, cellId, deps.clock);
    const revoked = getCell(deps.db, cellId)!;
    const fleet = deps.fleet as Disconnectable;
    fleet.session?.(cellId)?.close(new LinkError("cell_revoked", `cell ${cellId} was revoked at ${revoked.revoked}; re-enroll it to get a new token`));
    res.json(cellView(revoked, liveOf(cellId)));
  });

  return router;
}
