/**
 * GET /v1/runs/{run_id}/episodes' paged listing (api/routes/episodes.ts, http/json-list-stream.ts) on a real store
 * (both engines) behind a real HTTP server on port 0: the streamed bytes are the whole list's JSON; a client that
 * goes away stops the reads (the store's statements counted); an error after the first bytes closes the connection
 * so the client sees a truncated answer, and is logged; one before them is the error envelope.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import { get, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import express, { type Response } from "express";
import { episodeListReader } from "../../coordinator/api/routes/episodes.js";
import { errorHandler } from "../../coordinator/api/error-handler.js";
import { writeJsonList } from "../../coordinator/http/json-list-stream.js";
import { DEFAULT_ACCOUNT_ID, ensureAccount } from "../../coordinator/store/accounts-repo.js";
import type { Db } from "../../coordinator/store/database.js";
import { seedLargeRun, wholeEpisodeList } from "../support/large-run.js";
import { STORE_ENGINES, openTestDatabase } from "../support/test-database.js";

const RUN = "run_StreamedList000000001";
const EPISODES = 2_000;
const PAGE = 100;
const URLS = { baseUrl: "http://assay.test", artifactUrl: "http://assay.test/artifacts" };

/** `db` with every read of a listing page (an episodes page or its artifact rows) counted. */
function countingReads(db: Db): { db: Db; reads: () => number } {
  let reads = 0;
  const counted = Object.create(db, {
    prepare: {
      value: (sql: string) => {
        if (/^SELECT \* FROM (episodes|artifacts) WHERE/.test(sql)) reads++;
        return db.prepare(sql);
      },
    },
  }) as Db;
  return { db: counted, reads: () => reads };
}

type PageSource = (res: Response, pages: AsyncGenerator<Array<Record<string, unknown>>>) => AsyncGenerator<Array<Record<string, unknown>>>;

for (const engine of STORE_ENGINES) {
  describe(`the episode listing streamed a page at a time (${engine})`, function () {
    this.timeout(120_000);
    let db: Db;
    let server: ReturnType<express.Express["listen"]>;
    let base: string;
    /** What the next request's page source does with the listing's pages; by default passes them on. */
    let source: PageSource = (_res, pages) => pages;
    let handled: Promise<void> = Promise.resolve();
    const logged: Array<{ message: string; error: unknown }> = [];
    let reads: () => number;

    before(async () => {
      db = await openTestDatabase(engine);
      await ensureAccount(db, DEFAULT_ACCOUNT_ID, "Default", new Date().toISOString());
      await seedLargeRun(db, RUN, EPISODES);
      const counted = countingReads(db);
      reads = counted.reads;
      const log = (message: string, error: unknown) => void logged.push({ message, error });
      const app = express();
      app.get("/list", async (req, res) => {
        let finished!: () => void;
        handled = new Promise((resolve) => (finished = resolve));
        try {
          const reader = episodeListReader(counted.db, { id: RUN, kind: "run" }, {}, URLS, PAGE);
          const first = await reader.read(-1);
          await writeJsonList(req, res, { object: "list", url: `/v1/runs/${RUN}/episodes` }, source(res, reader.pagesFrom(first)), log);
        } finally {
          finished();
        }
      });
      app.use(errorHandler("http://assay.test/docs", log));
      server = app.listen(0, "127.0.0.1");
      await once(server, "listening");
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(async () => {
      server?.closeAllConnections();
      server?.close();
      await db?.close();
    });
    beforeEach(() => {
      source = (_res, pages) => pages;
      logged.length = 0;
    });

    const request = () => new Promise<IncomingMessage>((resolve, reject) => get(`${base}/list`, resolve).on("error", reject));
    /** The body as far as it came, and whether it ended (false: the connection closed first). */
    const bodyOf = async (res: IncomingMessage): Promise<{ text: string; ended: boolean }> => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      const ended = await new Promise<boolean>((resolve) => {
        res.on("end", () => resolve(true));
        res.on("error", () => resolve(false));
        res.on("aborted", () => resolve(false));
      });
      return { text: Buffer.concat(chunks).toString("utf8"), ended };
    };

    it("sends the whole list's JSON, byte for byte, chunked, reading each page once", async () => {
      const before = reads();
      const res = await request();
      const { text, ended } = await bodyOf(res);
      await handled;
      assert.equal(ended, true);
      assert.equal(res.headers["content-type"], "application/json; charset=utf-8");
      assert.equal(res.headers["transfer-encoding"], "chunked");
      assert.equal(res.headers.etag, undefined);
      assert.equal(text, JSON.stringify(await wholeEpisodeList(db, { id: RUN, kind: "run" }, {}, URLS)));
      // Pages of 100 of the 1,980 listed episodes (every 97th is pending): 20 pages, two reads each.
      assert.equal(reads() - before, 2 * Math.ceil((EPISODES - Math.floor(EPISODES / 97)) / PAGE));
    });

    it("stops reading the store when the client goes away mid-listing", async () => {
      let pulled = 0;
      let client: IncomingMessage | undefined;
      // Once the third page is read, the client hangs up; the page is handed over after the server saw it go.
      source = async function* (res, pages) {
        for await (const page of pages) {
          if (++pulled === 3) {
            client!.destroy();
            if (!res.destroyed) await once(res, "close");
          }
          yield page;
        }
      };
      const before = reads();
      client = await request();
      const { ended } = await bodyOf(client);
      await handled;
      assert.equal(ended, false);
      assert.equal(pulled, 3, "no page was read after the client went away");
      assert.equal(reads() - before, 3 * 2, "the store was read for three pages only");
      assert.deepEqual(logged, [], "a client going away is not an error");
    });

    it("closes the connection when a read fails after the first bytes, so the client sees a truncated answer, and logs it", async () => {
      source = async function* (_res, pages) {
        let n = 0;
        for await (const page of pages) {
          if (++n === 2) throw new Error("the store went away");
          yield page;
        }
      };
      const res = await request();
      const { text, ended } = await bodyOf(res);
      await handled;
      assert.equal(res.statusCode, 200);
      assert.equal(ended, false, "the chunked answer must not end as if complete");
      assert.ok(text.startsWith(`{"object":"list","url":"/v1/runs/${RUN}/episodes","data":[{`), text.slice(0, 100));
      assert.throws(() => JSON.parse(text), SyntaxError);
      assert.equal(logged.length, 1);
      assert.match(logged[0].message, /failed after its first bytes were sent/);
      assert.equal((logged[0].error as Error).message, "the store went away");
    });

    it("answers with the error envelope when the listing fails before its first bytes", async () => {
      source = async function* () {
        throw new Error("the store went away");
      };
      const res = await request();
      const { text, ended } = await bodyOf(res);
      await handled;
      assert.equal(ended, true);
      assert.equal(res.statusCode, 500);
      assert.equal((JSON.parse(text) as { error: { code: string } }).error.code, "internal_error");
    });
  });
}
