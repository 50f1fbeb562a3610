/**
 * Published leaderboards, readable without a key (public data; rate-limited per client address,
 * PDF reports more tightly: api/rate-limit.ts anonymousRateLimit):
 * - GET /v1/leaderboards: every board with a published result, most recently updated first;
 * - GET /v1/leaderboards/{leaderboard_id}: its entries, tiers, ranking rule and Bradley-Terry fit;
 * - GET /v1/leaderboards/{leaderboard_id}/entries/{run_id}/report[?format=pdf]: the entry's citable
 *   report, as the owner sees it less its cost and with its cells numbered, not named
 *   (coordinator/reports/published-report.ts). Its PDF is rendered once per revision of the board
 *   (the newest result's completion and the entry count) and kept, so repeated anonymous requests
 *   do not render again.
 * Board tier rankings are kept per board revision (leaderboards/ranking-cache.ts).
 */
import { Router, type NextFunction, type Request, type Response } from "express";
import { AssayError } from "../../errors/assay-error.js";
import { buildLeaderboards, findLeaderboard } from "../../leaderboards/leaderboards.js";
import { createRankingCache } from "../../leaderboards/ranking-cache.js";
import { buildReport } from "../../reports/report.js";
import { publishedReport } from "../../reports/published-report.js";
import { RenderCache } from "../../reports/render-cache.js";
import { getRun } from "../../store/runs-repo.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { clientAddress } from "../client-address.js";
import { anonymousRateLimit } from "../rate-limit.js";
import { ReportQuery } from "../schemas/runs.js";
import { parseQuery } from "../validate-request.js";

/** Published report PDFs kept (each a few tens of KB). */
const PUBLISHED_PDFS_KEPT = 64;
/** Boards whose tier ranking is kept between reads (each a few KB). */
const RANKINGS_KEPT = 256;

/** Mounted at /v1/leaderboards, ahead of the keyed /v1 routes. */
export function leaderboardsRouter(deps: CompiledApiDeps): Router {
  const router = Router();
  const limits = anonymousRateLimit(deps.rateLimits, (req) => clientAddress(req.socket.remoteAddress, req.headers["x-forwarded-for"], deps.trustedProxies));
  router.use(limits.reads);
  // A PDF costs far more than JSON: its own, tighter bucket per address.
  const pdfRenders = (req: Request, res: Response, next: NextFunction) => (req.query.format === "pdf" ? limits.renders(req, res, next) : next());
  const pdfs = new RenderCache(PUBLISHED_PDFS_KEPT);
  // A board's ranking (a posterior per entry) is recomputed only when the board changed.
  const rankings = createRankingCache(RANKINGS_KEPT);
  const notFound = (id: string) => new AssayError("not_found", `no leaderboard ${JSON.stringify(id)}; GET /v1/leaderboards lists them`);

  router.get("/", async (_req, res) => {
    const boards = await buildLeaderboards(deps.db, deps.urls.baseUrl, rankings);
    res.json({
      object: "list",
      url: "/v1/leaderboards",
      data: boards.map((board) => {
        const top = board.entries[0]!;
        return {
          id: board.id, object: "leaderboard", kind: board.kind, title: board.title, pins: board.pins, updated: board.updated, entries: board.entries.length,
          leader: { policy_name: top.policy_name, account: top.account, success_rate: top.success_rate, ci95: top.ci95, n: top.n },
          url: `${deps.urls.baseUrl}/v1/leaderboards/${board.id}`,
        };
      }),
    });
  });

  router.get("/:leaderboardId", async (req, res) => {
    const board = await findLeaderboard(deps.db, deps.urls.baseUrl, req.params.leaderboardId, rankings);
    if (!board) throw notFound(req.params.leaderboardId);
    res.json(board);
  });

  router.use("/:leaderboardId/entries/:runId/report", pdfRenders);
  router.get("/:leaderboardId/entries/:runId/report", async (req, res) => {
    const board = await findLeaderboard(deps.db, deps.urls.baseUrl, req.params.leaderboardId, rankings);
    if (!board) throw notFound(req.params.leaderboardId);
    const entry = board.entries.find((e) => e.run_id === req.params.runId);
    if (!entry) throw new AssayError("not_found", `run ${JSON.stringify(req.params.runId)} has no entry on leaderboard ${board.id}`);
    const format = parseQuery(ReportQuery, req).format ?? "json";
    const now = deps.clock();
    const published = async () => ({ ...publishedReport(await buildReport(deps.db, (await getRun(deps.db, entry.run_id))!, deps.urls.baseUrl, now)), pdf_url: `${entry.report_url}?format=pdf` });
    if (format === "json") return void res.json(await published());
    const revision = `${board.id}@${board.updated}/${board.entries.length}/${entry.run_id}`;
    const pdf = await pdfs.get(revision, async () => deps.pdf.report(await published(), now));
    res.type("application/pdf").set("Content-Disposition", `inline; filename="assay-report-${entry.run_id}.pdf"`).send(pdf);
  });

  return router;
}
