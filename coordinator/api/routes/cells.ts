/**
 * /v1/cells: enrolling cell agents (POST, the token is shown once), the fleet as the coordinator sees
 * it (GET, never tokens; with what each cell needs from a person), revocation (DELETE: the token is
 * refused from then on and an open CellLink stream is cut at once), and the operator station's
 * answers (scene-ready, label, intervene, intervene-done, abort, invalidate-previous: coordinator/fleet/operator-station.ts). keys:admin of the operator account (acct_assay, whose key the first
 * start prints as the operator key); no customer account's key may add hardware to the fleet, the
 * quick start's own admin key (acct_default) included.
 */
import { q } from "../../runs/field-checks.js";
import { Router, type Response } from "express";
import { authOf } from "../../auth/authenticate.js";
import { AssayError } from "../../errors/assay-error.js";
import { enrollCell, revokeCell } from "../../fleet/enrollment.js";
import type { CellAttention, ConnectedCell, FleetView } from "../../cells/fleet-view.js";
import { LinkError } from "../../errors/link-errors.js";
import { countNotUploadedArtifactsByCell } from "../../store/artifacts-repo.js";
import { getCell, listCells, type CellRow } from "../../store/cells-repo.js";
import { getEpisode, lastFinishedEpisodeOfCell } from "../../store/episodes-repo.js";
import { getRun } from "../../store/runs-repo.js";
import { isTerminal } from "../../domain/run-state.js";
import type { Db } from "../../store/database.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { AbortEpisodeRequest, EnrollCellRequest, InterveneDoneRequest, InterveneRequest, InvalidatePreviousRequest, LabelEpisodeRequest, SceneReadyRequest } from "../schemas/cells.js";
import { parseBody } from "../validate-request.js";
import { OPERATOR_ACCOUNT_ID } from "./kits.js";

const FLEET_ACCOUNTS = new Set([OPERATOR_ACCOUNT_ID]);

/** The registry behind FleetView can cut a cell's stream; other FleetViews (tests) may not. */
type Disconnectable = FleetView & { session?(cellId: string): Promise<{ close(error: LinkError): void } | undefined> | { close(error: LinkError): void } | undefined };


function requireFleetOperator(res: Response, what: string): void {
  const { accountId } = authOf(res);
  if (!FLEET_ACCOUNTS.has(accountId)) {
    throw new AssayError("insufficient_scope", `${what} is a fleet operation: it needs a keys:admin key of ${[...FLEET_ACCOUNTS].join(" or ")}`);
  }
}

/** The wire view of what a cell needs from a person, with its episode's run and index from the store. */
async function attentionView(db: Db, attention: CellAttention | undefined, now: Date) {
  if (!attention) return null;
  const episode = await getEpisode(db, attention.episodeId);
  return {
    kind: attention.kind,
    episode_id: attention.episodeId,
    run_id: episode?.run_id ?? null,
    index: episode?.idx ?? null,
    since: attention.since,
    waiting_s: Math.max(0, Math.round((now.getTime() - Date.parse(attention.since)) / 100) / 10),
    scene: attention.scene,
  };
}

/** The wire view of a cell: enrollment facts from the store, live state from the fleet. Never the token. */
export function cellView(
  row: CellRow, live: ConnectedCell | undefined, extra: { enrollment_token?: string; recordings_not_uploaded?: { artifacts: number; since: string | null } } = {},
  attention: Awaited<ReturnType<typeof attentionView>> = null,
) {
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
    attention,
    // Live when connected; otherwise as the last Hello reported them (null: never connected).
    instruments: live ? live.instruments.map(instrumentView) : instrumentsOfHello(row.hello),
    instruments_down: live ? (live.instrumentsDown ?? []).map(instrumentView) : [],
  };
}

/** The view's `recordings_not_uploaded` of a cell: present only while it holds some. */
function recordingsOf(counts: Awaited<ReturnType<typeof countNotUploadedArtifactsByCell>>, cellId: string): { recordings_not_uploaded?: { artifacts: number; since: string | null } } {
  const held = counts.get(cellId);
  return held ? { recordings_not_uploaded: { artifacts: held.artifacts, since: held.oldestFinishedAt } } : {};
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

export function cellsRouter(deps: CompiledApiDeps, router: Router = Router()): Router {
  const liveOf = async (cellId: string) => (await deps.fleet.connectedCells()).find((c) => c.cellId === cellId);

  router.post("/cells", async (req, res) => {
    requireFleetOperator(res, "POST /v1/cells");
    const { cellId, model } = parseEnrollment(req.body, deps.pins.models.map((m) => m.id));
    // Enrolling an existing cell rotates its token (and lifts a revocation): the old token stops working.
    const token = await enrollCell(deps.db, { cellId, model }, deps.clock);
    const fleet = deps.fleet as Disconnectable;
    (await fleet.session?.(cellId))?.close(new LinkError("token_unknown", `cell ${cellId} was re-enrolled; connect with the new token`));
    res.status(201).json(cellView((await getCell(deps.db, cellId))!, undefined, { enrollment_token: token }));
  });

  router.get("/cells", async (_req, res) => {
    requireFleetOperator(res, "GET /v1/cells");
    const live = new Map((await deps.fleet.connectedCells()).map((c) => [c.cellId, c]));
    const now = deps.clock();
    const notUploaded = await countNotUploadedArtifactsByCell(deps.db);
    res.json({
      object: "list", url: "/v1/cells",
      data: await Promise.all((await listCells(deps.db)).map(async (row) =>
        cellView(row, live.get(row.id), recordingsOf(notUploaded, row.id), await attentionView(deps.db, live.get(row.id)?.attention, now)))),
    });
  });

  const enrolled = async (cellId: string): Promise<CellRow> => {
    const row = await getCell(deps.db, cellId);
    if (!row) throw new AssayError("not_found", `no enrolled cell ${q(cellId)}; list them with GET /v1/cells`);
    return row;
  };

  router.get("/cells/:cellId", async (req, res) => {
    requireFleetOperator(res, "GET /v1/cells/{cell_id}");
    const row = await enrolled(req.params.cellId);
    const live = await liveOf(row.id);
    const previous = await lastFinishedEpisodeOfCell(deps.db, row.id);
    const run = previous ? await getRun(deps.db, previous.runId) : undefined;
    res.json({
      ...cellView(row, live, recordingsOf(await countNotUploadedArtifactsByCell(deps.db), row.id), await attentionView(deps.db, live?.attention, deps.clock())),
      previous_episode: previous
        ? {
            id: previous.id, run_id: previous.runId, index: previous.idx, attempt: previous.attempt, outcome: previous.outcome,
            finished_at: previous.finishedAt, run_open: run !== undefined && !isTerminal(run.status),
          }
        : null,
    });
  });

  router.post("/cells/:cellId/scene-ready", async (req, res) => {
    requireFleetOperator(res, "POST /v1/cells/{cell_id}/scene-ready");
    const row = await enrolled(req.params.cellId);
    const body = parseBody(SceneReadyRequest, req.body, { emptyIsObject: true });
    const { episodeId } = await deps.station.confirmScene(row.id, body.episode_id);
    res.json({ object: "operator_answer", cell_id: row.id, episode_id: episodeId, action: "scene_ready" });
  });

  router.post("/cells/:cellId/label", async (req, res) => {
    requireFleetOperator(res, "POST /v1/cells/{cell_id}/label");
    const row = await enrolled(req.params.cellId);
    const body = parseBody(LabelEpisodeRequest, req.body);
    const { episodeId } = await deps.station.labelEpisode(row.id, { success: body.success, progress: body.progress ?? null, note: body.note ?? null, episodeId: body.episode_id });
    res.json({ object: "operator_answer", cell_id: row.id, episode_id: episodeId, action: "label" });
  });

  router.post("/cells/:cellId/intervene", async (req, res) => {
    requireFleetOperator(res, "POST /v1/cells/{cell_id}/intervene");
    const row = await enrolled(req.params.cellId);
    const body = parseBody(InterveneRequest, req.body, { emptyIsObject: true });
    const { episodeId } = await deps.station.intervene(row.id, body.episode_id);
    res.json({ object: "operator_answer", cell_id: row.id, episode_id: episodeId, action: "intervene" });
  });

  router.post("/cells/:cellId/intervene-done", async (req, res) => {
    requireFleetOperator(res, "POST /v1/cells/{cell_id}/intervene-done");
    const row = await enrolled(req.params.cellId);
    const body = parseBody(InterveneDoneRequest, req.body, { emptyIsObject: true });
    const { episodeId } = await deps.station.interventionDone(row.id, { note: body.note ?? null, episodeId: body.episode_id });
    res.json({ object: "operator_answer", cell_id: row.id, episode_id: episodeId, action: "intervene_done" });
  });

  router.post("/cells/:cellId/abort", async (req, res) => {
    requireFleetOperator(res, "POST /v1/cells/{cell_id}/abort");
    const row = await enrolled(req.params.cellId);
    const body = parseBody(AbortEpisodeRequest, req.body, { emptyIsObject: true });
    const { episodeId } = await deps.station.abortEpisode(row.id, body.note ?? null, body.episode_id);
    res.json({ object: "operator_answer", cell_id: row.id, episode_id: episodeId, action: "abort" });
  });

  router.post("/cells/:cellId/invalidate-previous", async (req, res) => {
    requireFleetOperator(res, "POST /v1/cells/{cell_id}/invalidate-previous");
    const row = await enrolled(req.params.cellId);
    const body = parseBody(InvalidatePreviousRequest, req.body);
    const done = await deps.station.invalidatePrevious(row.id, { reason: body.reason, note: body.note ?? null, episodeId: body.episode_id });
    res.json({
      object: "invalidation", cell_id: row.id, episode_id: done.episodeId, run_id: done.runId, index: done.index, attempt: done.attempt,
      reason: done.reason, note: done.note, outcome: done.outcome,
    });
  });

  router.delete("/cells/:cellId", async (req, res) => {
    requireFleetOperator(res, "DELETE /v1/cells/{cell_id}");
    const cellId = req.params.cellId;
    const row = await getCell(deps.db, cellId);
    if (!row) throw new AssayError("not_found", `no enrolled cell ${q(cellId)}; list them with GET /v1/cells`);
    // Revoking twice keeps the first timestamp.
    if (!row.revoked) await revokeCell(deps.db, cellId, deps.clock);
    const revoked = (await getCell(deps.db, cellId))!;
    const fleet = deps.fleet as Disconnectable;
    (await fleet.session?.(cellId))?.close(new LinkError("cell_revoked", `cell ${cellId} was revoked at ${revoked.revoked}; re-enroll it to get a new token`));
    res.json(cellView(revoked, await liveOf(cellId)));
  });

  return router;
}
