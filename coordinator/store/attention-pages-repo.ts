/**
 * Attention pages (rows of `attention_pages`): which attention episodes of a cell (what it needed, for
 * which episode, since when) already raised `cell.attention_needed`. The key is the attention itself,
 * so a coordinator that learns the same attention again (the cell re-sends it after a reconnect or a
 * coordinator restart) finds it raised and never raises it twice.
 */
import type { Db } from "./database.js";

export interface AttentionPageKey {
  cellId: string;
  kind: "reset" | "label" | "intervene";
  episodeId: string;
  /** When the cell started waiting (ISO 8601), as the cell said. */
  since: string;
}

/**
 * Records that this attention raised its page at `raisedAt`; false when it already had (nothing
 * written). Call it in the transaction that queues the event, so both commit or neither does.
 */
export async function claimAttentionPage(db: Db, key: AttentionPageKey, raisedAt: Date): Promise<boolean> {
  return (await db
    .prepare("INSERT INTO attention_pages (cell_id, kind, episode_id, since, raised_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
    .run(key.cellId, key.kind, key.episodeId, key.since, raisedAt.toISOString())).changes === 1;
}

/** Notes the webhook event the page raised. */
export async function setAttentionPageEvent(db: Db, key: AttentionPageKey, eventId: string): Promise<void> {
  await db.prepare("UPDATE attention_pages SET event_id = ? WHERE cell_id = ? AND kind = ? AND episode_id = ? AND since = ?")
    .run(eventId, key.cellId, key.kind, key.episodeId, key.since);
}
