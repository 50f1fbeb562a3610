/**
 * Which coordinator holds each cell's CellLink stream (table `cell_links`), and the cell as that
 * coordinator last saw it, so any coordinator can list the whole fleet and send a message to a
 * cell through the one holding it.
 */
import type { Db } from "./database.js";

export interface CellLinkRow {
  cell_id: string;
  coordinator_id: string;
  session_id: string;
  connected_at: string;
  view: string;
  updated: string;
}

/** Records that this coordinator now holds the cell's stream (replacing any earlier holder); `view` is stored as JSON. */
export async function recordCellLink(db: Db, link: { cellId: string; coordinatorId: string; sessionId: string; connectedAt: string; view: object; at: string }): Promise<void> {
  await db.prepare(
    `INSERT INTO cell_links (cell_id, coordinator_id, session_id, connected_at, view, updated) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (cell_id) DO UPDATE SET coordinator_id = excluded.coordinator_id, session_id = excluded.session_id,
       connected_at = excluded.connected_at, view = excluded.view, updated = excluded.updated`,
  ).run(link.cellId, link.coordinatorId, link.sessionId, link.connectedAt, JSON.stringify(link.view), link.at);
}

/**
 * Views written by one statement of refreshCellLinks. Every statement has this many rows (the last one padded with
 * rows that match no link), so that it is one prepared statement, parsed once per connection, whatever the count.
 */
const REFRESH_BATCH = 50;
const REFRESH_ROWS = Array.from({ length: REFRESH_BATCH }, (_, i) => (i === 0 ? "SELECT CAST(? AS TEXT) AS cell_id, CAST(? AS TEXT) AS session_id, CAST(? AS TEXT) AS view" : "SELECT ?, ?, ?")).join(" UNION ALL ");

/**
 * Refreshes the views of many links at once, each only where its session still holds it; returns the cells
 * whose link was refreshed. One statement (one commit) per REFRESH_BATCH links rather than one per link: a
 * fleet whose cells each change view every episode otherwise writes (and on PostgreSQL commits) once per episode.
 */
export async function refreshCellLinks(db: Db, links: ReadonlyArray<{ cellId: string; sessionId: string; view: object }>, at: string): Promise<Set<string>> {
  const refreshed = new Set<string>();
  for (let from = 0; from < links.length; from += REFRESH_BATCH) {
    const values: Array<string | null> = links.slice(from, from + REFRESH_BATCH).flatMap((link) => [link.cellId, link.sessionId, JSON.stringify(link.view)]);
    while (values.length < 3 * REFRESH_BATCH) values.push(null);
    const updated = await db.prepare(
      `UPDATE cell_links SET view = v.view, updated = ? FROM (${REFRESH_ROWS}) AS v
       WHERE cell_links.cell_id = v.cell_id AND cell_links.session_id = v.session_id RETURNING cell_links.cell_id`,
    ).all(at, ...values) as Array<{ cell_id: string }>;
    for (const row of updated) refreshed.add(row.cell_id);
  }
  return refreshed;
}

/** Removes the link if this session still holds it; returns whether it did. */
export async function removeCellLink(db: Db, cellId: string, sessionId: string): Promise<boolean> {
  return (await db.prepare("DELETE FROM cell_links WHERE cell_id = ? AND session_id = ?").run(cellId, sessionId)).changes === 1;
}

export async function getCellLink(db: Db, cellId: string): Promise<CellLinkRow | undefined> {
  return await db.prepare("SELECT * FROM cell_links WHERE cell_id = ?").get(cellId) as CellLinkRow | undefined;
}

/** Links held by coordinators whose lease runs to `liveSince` or later, with the holder's base URL. */
export async function liveCellLinks(db: Db, liveSince: Date): Promise<Array<CellLinkRow & { base_url: string }>> {
  return await db
    .prepare(
      `SELECT l.*, c.base_url FROM cell_links l JOIN coordinators c ON c.id = l.coordinator_id
       WHERE c.alive_until >= ? ORDER BY l.cell_id`,
    )
    .all(liveSince.toISOString()) as Array<CellLinkRow & { base_url: string }>;
}
