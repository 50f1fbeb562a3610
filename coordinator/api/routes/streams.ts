/**
 * Live streams of a cell:
 * - GET /v1/streams/{cell} (streams:read): the descriptor: state, work, cameras with MJPEG URLs,
 *   the WebRTC signalling URL and ICE servers; URLs carry a 10-minute token.
 * - GET /streams/cells/{cell}/cameras/{camera}.mjpeg?token=...: multipart/x-mixed-replace JPEGs
 *   (also with a bearer key holding streams:read instead of the token). A slow client gets the
 *   newest frame when it is ready for one; older frames are dropped, never queued.
 * Who may watch: stream-access.ts (operators every cell, customers the cells running their work),
 * asked again for as long as the stream is open (live-access-watch.ts): when the grant lapses the
 * multipart response ends with its closing boundary. Open MJPEG responses are capped per key and per
 * account (connection-caps.ts).
 */
import { Router, type Request, type Response } from "express";
import { installationOf } from "../../../firmware-pins/pins.js";
import { AssayError } from "../../errors/assay-error.js";
import { DEFAULT_MAX_FRAME_RATE_HZ } from "../../streams/live-hub.js";
import { admitViewer, streamViewer, workOfCell, type ViewerGrant } from "../../streams/stream-access.js";
import { signallingUrl, signStreamToken, STREAM_SCOPE, STREAM_TOKEN_TTL_MS, type StreamGrant } from "../../auth/stream-tokens.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { OPERATOR_ACCOUNT_ID } from "./kits.js";
import { authOf } from "../../auth/authenticate.js";
import { forwardHttp, wasForwarded } from "../../streams/live-forwarding.js";

const STATE_OF: Record<string, "idle" | "running" | "estopped" | "held"> = {
  idle: "idle", busy: "running", estopped: "estopped", held: "held", firmware_mismatch: "held",
};

function unknownCell(cellId: string): AssayError {
  return new AssayError("not_found", `no stream ${JSON.stringify(cellId)}: no such cell, or it is not running your work now (customers watch the cells running their runs; operators watch every cell)`);
}

export function streamsRouter(deps: CompiledApiDeps, router: Router = Router()): Router {

  router.get("/streams/:cellId", async (req, res) => {
    const { accountId, keyId, scope } = authOf(res);
    const cellId = req.params.cellId;
    const holder = wasForwarded(req) ? undefined : await deps.liveForwarding.holderOf(cellId);
    if (holder) return forwardHttp(req, res, holder, deps.urls.docsUrl);
    const connected = (await deps.fleet.connectedCells()).find((c) => c.cellId === cellId);
    const installed = installationOf(deps.pins, cellId);
    const admitted = connected || installed ? await admitViewer(deps.db, deps.fleet, OPERATOR_ACCOUNT_ID, { accountId, keyId, tokenRunId: null, tokenExpiresAt: null }, cellId) : null;
    if (!admitted) throw unknownCell(cellId);
    const now = deps.clock();
    const expiresAt = new Date(now.getTime() + STREAM_TOKEN_TTL_MS);
    // The token carries what it grants: this key, streams:read (the route's scope), and a customer's run.
    const grant: StreamGrant = { cellId, accountId, keyId, expiresAt, scope: scope.filter((s) => s === STREAM_SCOPE), ...(admitted.runId ? { runId: admitted.runId } : {}) };
    const token = await signStreamToken(deps.db, grant, now);
    const work = await workOfCell(deps.db, deps.fleet, cellId);
    res.json({
      object: "stream",
      cell: cellId,
      robot: connected ? `${connected.model}@${connected.firmware}` : `${installed!.model}@${installed!.firmware}`,
      environment: connected?.environment ?? installed!.environment,
      state: connected ? STATE_OF[connected.state] ?? "held" : "offline",
      run_id: work?.runId ?? null,
      episode: work ? { id: work.episodeId, index: work.index } : null,
      cameras: deps.live.cameras(cellId).map((c) => ({
        name: c.name, width: c.width, height: c.height, rate_hz: c.rateHz,
        mjpeg_url: `${deps.urls.baseUrl}/streams/cells/${encodeURIComponent(cellId)}/cameras/${encodeURIComponent(c.name)}.mjpeg?token=${token}`,
      })),
      max_frame_rate_hz: DEFAULT_MAX_FRAME_RATE_HZ,
      webrtc: { url: await signallingUrl(deps.db, deps.urls.streamsUrl, grant, now), ice_servers: deps.iceServers, expires_at: expiresAt.toISOString() },
      viewers: deps.live.watchers(cellId),
      expires_at: expiresAt.toISOString(),
    });
  });

  return router;
}

/** The grant an MJPEG request watches under (token or key), which must allow watching the cell now; throws 401/403/404. */
async function mjpegGrant(deps: CompiledApiDeps, req: Request, cellId: string, token: string | undefined): Promise<ViewerGrant> {
  const viewer = await streamViewer(deps.db, cellId, { token, authorization: req.headers.authorization, keys: deps.apiKeys, guard: deps.rejectedKeys ? { limit: deps.rejectedKeys, req } : undefined }, deps.clock());
  const grant = await admitViewer(deps.db, deps.fleet, OPERATOR_ACCOUNT_ID, viewer, cellId);
  if (!grant) throw unknownCell(cellId);
  return grant;
}

const BOUNDARY = "assayframe";

/** GET /streams/cells/{cell}/cameras/{camera}.mjpeg */
export function mjpegRouter(deps: CompiledApiDeps): Router {
  const router = Router();
  router.get("/cells/:cellId/cameras/:file", async (req: Request, res: Response) => {
    const cellId = req.params.cellId as string;
    const match = /^(.+)\.mjpeg$/.exec(req.params.file as string);
    if (!match) throw new AssayError("not_found", `camera streams end in .mjpeg, e.g. /streams/cells/${cellId}/cameras/top.mjpeg`);
    const camera = match[1]!;
    const holder = wasForwarded(req) ? undefined : await deps.liveForwarding.holderOf(cellId);
    if (holder) return forwardHttp(req, res, holder, deps.urls.docsUrl);
    const grant = await mjpegGrant(deps, req, cellId, typeof req.query.token === "string" ? req.query.token : undefined);
    if (!deps.live.cameras(cellId).some((c) => c.name === camera)) {
      const known = deps.live.cameras(cellId).map((c) => c.name);
      throw new AssayError("not_found", `cell ${cellId} has no camera ${JSON.stringify(camera)}${known.length ? `; its cameras: ${known.join(", ")}` : " (it is offline)"}`);
    }
    const release = deps.connectionCaps.acquire("mjpeg_viewers", grant.keyId, grant.accountId);
    res.writeHead(200, {
      "Content-Type": `multipart/x-mixed-replace; boundary=${BOUNDARY}`,
      "Cache-Control": "no-cache, no-store",
      Connection: "close",
      Pragma: "no-cache",
    });
    // The viewer learns at once that it was admitted, not with the first frame.
    res.flushHeaders();
    // No frame goes out before the grant is bound and checked again (the cell may have moved on to
    // another run while the viewer was admitted); until then only the newest frame is kept.
    let writing = true;
    let lapsed = false;
    let pending: { jpeg: Uint8Array; capturedAtMs: number } | undefined;
    const write = ({ jpeg, capturedAtMs }: { jpeg: Uint8Array; capturedAtMs: number }) => {
      if (lapsed) return;
      writing = true;
      const head = `--${BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: ${jpeg.length}\r\nX-Captured-At-Ms: ${capturedAtMs}\r\n\r\n`;
      res.write(head);
      const flushed = res.write(Buffer.from(jpeg.buffer, jpeg.byteOffset, jpeg.byteLength));
      res.write("\r\n");
      if (flushed) writing = false;
      else res.once("drain", () => {
        writing = false;
        const next = pending;
        pending = undefined;
        if (next) write(next);
      });
    };
    const unwatch = deps.live.watchCamera(cellId, camera, (frame) => {
      if (writing) pending = frame; // keep only the newest
      else write(frame);
    });
    // Listening before the first await: a viewer that leaves while its grant is being bound (the
    // check waits for the store) still lets go of the camera, the binding and its connection slot.
    let closed = false;
    let unbind: (() => void) | undefined;
    res.on("close", () => {
      closed = true;
      unwatch();
      unbind?.();
      release();
    });
    // The grant lapsed (the run ended, the cell moved on, the key was revoked, the token expired):
    // no frame after this one; the multipart body ends with its closing boundary.
    const bound = await deps.liveAccess.bind(grant, () => {
      lapsed = true;
      pending = undefined;
      unwatch();
      if (res.writableLength > 1024 * 1024) res.destroy();
      else res.end(`--${BOUNDARY}--\r\n`);
    });
    if (closed) bound();
    else unbind = bound;
    if (lapsed || closed) return;
    writing = false;
    const first = pending;
    pending = undefined;
    if (first) write(first);
  });
  return router;
}
