/**
 * The thread behind SyncClient (./sync-client.ts): it holds one PostgreSQL connection and runs the
 * queries the coordinator's thread sends, one at a time, then wakes that thread through the shared
 * flag. A connection the server ends is replaced on the next query, unless a transaction was open
 * on it: that query fails, so the caller's transaction rolls back instead of continuing on a
 * connection that never saw its BEGIN.
 *
 * Plain JavaScript on purpose: the coordinator's thread blocks in Atomics.wait while this thread
 * starts, and a TypeScript loader (tsx) needs the blocked thread to load a .ts module, so a .ts
 * worker would never start. Messages are typed in ./sync-protocol.ts.
 */
import pg from "pg";
import { workerData } from "node:worker_threads";

/** @type {{ port: import("node:worker_threads").MessagePort; flag: SharedArrayBuffer; connectionString: string; sessionSettings: string[] }} */
const { port, flag, connectionString, sessionSettings } = workerData;
const signal = new Int32Array(flag);

const INT8 = 20;

/**
 * BIGINT (every INTEGER column of the migrated schema, and COUNT(*)) arrives as text, since it may
 * exceed 2^53. Store integers are counts, byte sizes and seeds: read them as numbers, and refuse one
 * that would lose precision rather than round it.
 * @param {number} oid
 * @param {"text" | "binary"} [format]
 */
function typeParser(oid, format) {
  if (oid === INT8 && format !== "binary") {
    return (/** @type {string} */ value) => {
      const n = Number(value);
      if (!Number.isSafeInteger(n)) throw new Error(`store integer ${value} exceeds 2^53 and cannot be read as a number`);
      return n;
    };
  }
  return format === "binary" ? pg.types.getTypeParser(oid, "binary") : pg.types.getTypeParser(oid, "text");
}

/** @type {pg.Client | undefined} */
let client;
/** @type {Error | undefined} */
let broken;

async function connection() {
  if (client && !broken) return client;
  if (client) await client.end().catch(() => undefined);
  client = undefined;
  broken = undefined;
  const next = new pg.Client({ connectionString, types: { getTypeParser: typeParser } });
  // An error on an idle connection (the server restarted) must not end the thread: the next query reconnects.
  next.on("error", (error) => void (broken = error));
  await next.connect();
  for (const statement of sessionSettings) await next.query(statement);
  client = next;
  return next;
}

/** @param {import("./sync-protocol.js").SyncRequest} request */
async function handle(request) {
  if (request.type === "close") {
    await client?.end().catch(() => undefined);
    client = undefined;
    return { ok: true, rows: [], rowCount: 0 };
  }
  if (request.inTransaction && (!client || broken)) {
    const why = broken ? ` (${broken.message})` : "";
    return { ok: false, message: `the PostgreSQL connection was lost inside a transaction${why}; the transaction is rolled back`, code: "08006" };
  }
  const db = await connection();
  // Statements with parameters are prepared once per connection (pg keeps the names), under a
  // name derived from their text.
  const named = request.name !== undefined && request.values.length > 0;
  let result;
  try {
    result = await db.query({ text: request.text, values: request.values, ...(named ? { name: request.name } : {}) });
  } catch (error) {
    // The connection itself failed (no SQLSTATE, class 08, or the server shutting it down): replace it next time.
    const code = /** @type {{ code?: string }} */ (error).code;
    if (!code || code.startsWith("08") || code.startsWith("57P")) broken = /** @type {Error} */ (error);
    throw error;
  }
  // Several statements in one text (no parameters) give one result each.
  const results = Array.isArray(result) ? result : [result];
  const rows = results.at(-1)?.rows ?? [];
  const rowCount = results.reduce((n, r) => n + (r.rowCount ?? 0), 0);
  return { ok: true, rows, rowCount };
}

port.on("message", (/** @type {import("./sync-protocol.js").Tagged<import("./sync-protocol.js").SyncRequest>} */ request) => {
  handle(request)
    .catch((/** @type {any} */ error) => ({ ok: false, message: error?.message ?? String(error), code: error?.code, detail: error?.detail, constraint: error?.constraint }))
    .then((reply) => {
      port.postMessage({ ...reply, id: request.id });
      Atomics.store(signal, 0, 1);
      Atomics.notify(signal, 0);
      if (request.type === "close") port.close();
    });
});
