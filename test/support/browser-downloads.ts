/**
 * The files a tab downloads, each read once Chromium reports it complete.
 *
 * Chromium gives a download its final name before the file is whole (a CI run read the console's
 * LaTeX table as an empty file it had found by name), so waiting for the name is a race. This asks
 * the browser for its download events (`Browser.setDownloadBehavior` with `eventsEnabled`) and
 * reads a file after the `Browser.downloadProgress` event that says it is `completed`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { CDPSession, Page } from "puppeteer-core";

interface Waiter {
  resolve: () => void;
  reject: (error: Error) => void;
}

export class BrowserDownloads {
  /** Suggested file name of each download begun, by its guid. */
  private readonly names = new Map<string, string>();
  /** Who waits for a file name's download to complete. */
  private readonly waiters = new Map<string, Waiter>();

  private constructor(
    private readonly cdp: CDPSession,
    readonly dir: string,
  ) {
    cdp.on("Browser.downloadWillBegin", (event) => this.names.set(event.guid, event.suggestedFilename));
    cdp.on("Browser.downloadProgress", (event) => {
      if (event.state === "inProgress") return;
      const name = this.names.get(event.guid);
      const waiter = name === undefined ? undefined : this.waiters.get(name);
      if (name === undefined || !waiter) return;
      this.waiters.delete(name);
      if (event.state === "completed") waiter.resolve();
      else waiter.reject(new Error(`the browser canceled the download of ${name}`));
    });
  }

  /** Saves `page`'s downloads into `dir` from now on. */
  static async open(page: Page, dir: string): Promise<BrowserDownloads> {
    const cdp = await page.createCDPSession();
    const downloads = new BrowserDownloads(cdp, dir);
    await cdp.send("Browser.setDownloadBehavior", { behavior: "allow", downloadPath: dir, eventsEnabled: true });
    return downloads;
  }

  /**
   * Does `start` (a click on a download button), waits until the browser has saved the download
   * named `fileName` completely, and returns its bytes. The deadline only names what never came.
   */
  async save(fileName: string, start: () => Promise<unknown>, deadlineMs = 30_000): Promise<Buffer> {
    if (this.waiters.has(fileName)) throw new Error(`a download of ${fileName} is already awaited`);
    let timer: NodeJS.Timeout | undefined;
    const done = new Promise<void>((resolve, reject) => {
      this.waiters.set(fileName, { resolve, reject });
      timer = setTimeout(() => {
        this.waiters.delete(fileName);
        const begun = [...this.names.values()];
        reject(new Error(`timed out after ${deadlineMs} ms waiting for the download ${fileName} to complete (begun: ${begun.join(", ") || "none"})`));
      }, deadlineMs);
    });
    try {
      await start();
      await done;
    } finally {
      clearTimeout(timer);
      this.waiters.delete(fileName);
    }
    return readFileSync(join(this.dir, fileName));
  }

  async close(): Promise<void> {
    await this.cdp.detach().catch(() => undefined);
  }
}
