/**
 * One headless Chromium shared by the browser spec files, so the suite launches it once per language
 * instead of once per file (each launch costs a couple of CPU seconds on CI's two cores).
 *
 * A file never holds the browser itself: it gets its own tabs (`openBrowserTabs`), opens its pages
 * there and closes them all in its `after`. Not a browser context (an incognito profile): Chromium
 * as @sparticuz/chromium runs it (`--single-process`) cannot create one ("Target.createTarget:
 * Target closed"), and running it multi-process would change what every browser test runs on. What
 * files then share is per origin (cookies, localStorage, the HTTP cache); the console keeps its key
 * in the tab's sessionStorage only (coordinator/console/public/session.js), so a new tab is signed
 * out whatever another file did. The browser stops at the end of the run (root hook,
 * test/support/suite-end.ts); one that crashed or was closed is launched again for the next file.
 */
import type { Browser, Page } from "puppeteer-core";
import { launchBrowser } from "./console-tab.js";
import { atSuiteEnd } from "./suite-end.js";

/** A spec file's tabs in the shared browser: `newPage()` as on a Browser; `close()` closes every page opened here. */
export interface BrowserTabs {
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

const browsers = new Map<string, Promise<Browser>>();
let registered = false;

async function sharedBrowser(options: { lang?: string }): Promise<Browser> {
  const key = options.lang ?? "";
  const current = browsers.get(key);
  if (current) {
    const browser = await current.catch(() => undefined);
    if (browser?.connected) return browser;
  }
  const launched = launchBrowser(options);
  browsers.set(key, launched);
  // A launch that failed is forgotten, so the next file tries again instead of reusing the failure.
  launched.catch(() => browsers.get(key) === launched && browsers.delete(key));
  if (!registered) {
    registered = true;
    atSuiteEnd(closeSharedBrowsers);
  }
  return launched;
}

/** Tabs in the shared Chromium for this `lang` (see launchBrowser). Close them when the file is done: `await tabs?.close()` in `after`. */
export async function openBrowserTabs(options: { lang?: string } = {}): Promise<BrowserTabs> {
  const browser = await sharedBrowser(options);
  const pages: Page[] = [];
  return {
    async newPage() {
      const page = await browser.newPage();
      pages.push(page);
      return page;
    },
    async close() {
      for (const page of pages.splice(0)) if (browser.connected && !page.isClosed()) await page.close();
    },
  };
}

async function closeSharedBrowsers(): Promise<void> {
  const all = [...browsers.values()];
  browsers.clear();
  for (const browser of all) await (await browser.catch(() => undefined))?.close();
}
