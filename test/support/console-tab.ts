/**
 * Driving the web console in headless Chromium (from npm) as a person would, and noticing what a
 * person would not: a tab records console errors, uncaught exceptions, requests that leave the
 * coordinator (no CDN), and any URL or log line that carries an API key.
 *
 * Chromium logs every non-2xx answer a page receives as a console error ("Failed to load resource").
 * A test that provokes an API error on purpose (a refused key, a bad run body) declares it with
 * `expectFailedLoad`, so those lines, and only those, are not counted as problems.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import chromium from "@sparticuz/chromium";
import puppeteer, { type Browser, type Page } from "puppeteer-core";

/**
 * Headless Chromium as @sparticuz/chromium ships it (H.264 and MJPEG included). `lang` sets the
 * browser's language (`--lang`): under a C/POSIX locale it reports `en-US@posix`, which no person's
 * browser does and which Intl refuses (uPlot formats its axes with Intl.NumberFormat(navigator.language)).
 */
export async function launchBrowser(options: { lang?: string } = {}): Promise<Browser> {
  const args = options.lang ? [...chromium.args, `--lang=${options.lang}`] : chromium.args;
  return puppeteer.launch({ args, executablePath: await chromium.executablePath(), headless: true, defaultViewport: { width: 1280, height: 900 } });
}

/** An accessible-name selector for a button (so the tests also check that buttons are named). */
export const button = (name: string) => `::-p-aria([name="${name}"][role="button"])`;
/** An accessible-name selector for a link. */
export const link = (name: string) => `::-p-aria([name="${name}"][role="link"])`;

interface ExpectedLoad {
  path: RegExp;
  status: number;
}

export class ConsoleTab {
  readonly problems: string[] = [];
  private readonly expected: ExpectedLoad[] = [];

  private constructor(readonly page: Page, readonly baseUrl: string, private readonly secrets: () => string[]) {}

  /** A new tab on the console's origin (in `browser`, or a spec file's tabs in the shared one: test/support/shared-browser.ts); `secrets` are the keys that must never show in a URL or the console. */
  static async open(browser: { newPage(): Promise<Page> }, baseUrl: string, secrets: () => string[]): Promise<ConsoleTab> {
    const tab = new ConsoleTab(await browser.newPage(), baseUrl, secrets);
    const origin = new URL(baseUrl).origin;
    tab.page.on("pageerror", (error) => tab.problems.push(`uncaught: ${(error as Error).message}`));
    tab.page.on("console", (message) => {
      const text = message.text();
      for (const secret of tab.secrets()) if (text.includes(secret)) tab.problems.push(`a key in the console: ${message.type()} ${text}`);
      if (message.type() !== "error") return;
      const url = message.location().url ?? "";
      const failed = /Failed to load resource: the server responded with a status of (\d+)/.exec(text);
      if (failed && tab.expected.some((e) => e.status === Number(failed[1]) && e.path.test(new URL(url).pathname))) return;
      tab.problems.push(`console error: ${text} (${url})`);
    });
    tab.page.on("request", (request) => {
      const url = request.url();
      if (!url.startsWith(`${origin}/`) && !url.startsWith("blob:") && !url.startsWith("data:")) tab.problems.push(`a request off the coordinator: ${url}`);
      for (const secret of tab.secrets()) if (url.includes(secret)) tab.problems.push(`a key in a URL: ${url}`);
    });
    return tab;
  }

  /** A non-2xx answer the test provokes on purpose (its console line is not a problem). */
  expectFailedLoad(path: RegExp, status: number): void {
    this.expected.push({ path, status });
  }

  /** Opens a console route, e.g. `/runs`, as a typed-in address would. */
  async goto(route: string): Promise<void> {
    await this.page.goto(`${this.baseUrl}/#${route}`);
  }

  /** Signs in on the sign-in page with the keyboard: the key field has the focus, Enter submits. */
  async signIn(key: string): Promise<void> {
    if (!(await this.page.$("#api-key"))) await this.goto("/sign-in");
    await this.page.waitForSelector("#api-key");
    await this.page.waitForFunction(() => document.activeElement?.id === "api-key");
    await this.page.keyboard.type(key);
    await this.page.keyboard.press("Enter");
    await this.page.waitForFunction(() => !location.hash.startsWith("#/sign-in"));
    await this.settled();
  }

  /** Waits until the page shows `text` (in its rendered text). */
  async waitForText(text: string, timeoutMs = 30_000): Promise<void> {
    await this.page.waitForFunction((t: string) => document.body.innerText.includes(t), { timeout: timeoutMs }, text).catch(async (error) => {
      throw new Error(`${(error as Error).message}: the page never showed ${JSON.stringify(text)}; it shows ${JSON.stringify((await this.text()).slice(0, 1500))}`);
    });
  }

  /** The page's rendered text. */
  text(): Promise<string> {
    return this.page.evaluate(() => document.body.innerText);
  }

  /** Waits until the route in the address bar has rendered (app.js marks it on <main>), then its document title. */
  async settled(): Promise<string> {
    await this.page.waitForFunction(() => {
      const main = document.getElementById("main")!;
      return main.dataset.route !== undefined && main.dataset.route === decodeURIComponent(location.hash.slice(1).split("?")[0]!) && main.getAttribute("aria-busy") === null;
    });
    return this.page.title();
  }

  /** Clicks a link or button that moves to another console page and waits for that page; its title. */
  async follow(selector: string): Promise<string> {
    const before = await this.page.evaluate(() => location.hash);
    await this.page.click(selector);
    await this.page.waitForFunction((hash: string) => location.hash !== hash, {}, before);
    return this.settled();
  }

  /**
   * A full-page screenshot into `dir` as `<name>.png`, after checking that the page shows each of
   * `expected` (what a person looking at the screenshot should see). Returns the file.
   */
  async shot(dir: string, name: string, expected: string[]): Promise<string> {
    const text = await this.text();
    for (const want of expected) assert.ok(text.includes(want), `screenshot ${name}: the page should show ${JSON.stringify(want)}; it shows ${JSON.stringify(text.slice(0, 1500))}`);
    const png = await this.page.screenshot({ fullPage: true });
    assert.ok(png.length > 10_000, `screenshot ${name} is only ${png.length} bytes`);
    const file = join(dir, `${name}.png`);
    writeFileSync(file, png);
    return file;
  }

  /** Fails with every problem seen so far, then forgets them. */
  assertClean(): void {
    const problems = this.problems.splice(0);
    assert.deepEqual(problems, [], `the console had problems:\n${problems.join("\n")}`);
  }

  async close(): Promise<void> {
    await this.page.close();
  }
}
