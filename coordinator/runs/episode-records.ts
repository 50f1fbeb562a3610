/**
 * Every episode of a run as records, for the reads that decide from a whole run (its report, the PDF's extras, the
 * month's usage, the leaderboards, its Result when it ends): read EPISODE_RECORDS_PAGE at a time, with a turn of
 * the event loop between pages. On SQLite a statement runs on the event loop, and a 10,000-episode run's records read
 * in one piece held it 170-250 ms (SELECT * and each row's JSON columns parsed). Inside a run's ending (its transaction
 * holds the run's lock, which every change to its episodes takes) the pages read the episodes as they stay.
 */
import { nextTurn } from "../async/next-turn.js";
import type { Db } from "../store/database.js";
import { listEpisodeRecordsPage, type EpisodeRecord } from "../store/episodes-repo.js";

/** Episodes read per statement. */
export const EPISODE_RECORDS_PAGE = 500;

/**
 * The run's episodes (any status) by index, with a turn of the event loop after every page, the last included: a
 * caller reading run after run (the month's usage, the leaderboards) lets other requests in between runs too (on
 * SQLite an awaited statement resumes before any I/O is looked at).
 */
export async function readEpisodeRecords(db: Db, runId: string): Promise<EpisodeRecord[]> {
  const records: EpisodeRecord[] = [];
  for (let afterIdx = -1; ;) {
    const page = await listEpisodeRecordsPage(db, runId, afterIdx, EPISODE_RECORDS_PAGE);
    for (const record of page) records.push(record);
    await nextTurn();
    if (page.length < EPISODE_RECORDS_PAGE) return records;
    afterIdx = page[page.length - 1]!.idx;
  }
}
