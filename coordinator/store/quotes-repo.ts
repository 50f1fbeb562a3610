/** Price quotes (POST /v1/quote): rows of `quotes`; `request` is the canonical JSON of the quoted body. */
import type { Db } from "./database.js";

export interface QuoteRow {
  id: string;
  account_id: string;
  created: string;
  expires: string;
  /** Canonical JSON of the quoted request (labels left out). */
  request: string;
  /** JSON of the quote as returned. */
  quote: string;
}

export async function insertQuote(db: Db, row: QuoteRow): Promise<void> {
  await db.prepare("INSERT INTO quotes (id, account_id, created, expires, request, quote) VALUES (?, ?, ?, ?, ?, ?)").run(
    row.id, row.account_id, row.created, row.expires, row.request, row.quote,
  );
}

/** The account's quote's expiry and quoted request, or undefined when the account has no such quote. */
export async function findQuoteOfAccount(db: Db, accountId: string, quoteId: string): Promise<Pick<QuoteRow, "expires" | "request"> | undefined> {
  return await db.prepare("SELECT expires, request FROM quotes WHERE id = ? AND account_id = ?").get(quoteId, accountId) as Pick<QuoteRow, "expires" | "request"> | undefined;
}
