// The real browser of the report.html tests: Debian's Chromium, headless, driven by playwright-core,
// its network pointed at a port nothing listens on, and every request the page makes recorded.
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';

/** The system Chromium (STATEGATE_CHROMIUM overrides); a missing browser fails the tests, never skips them. */
export const CHROMIUM = process.env.STATEGATE_CHROMIUM ?? '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium, or set STATEGATE_CHROMIUM`);
  return chromium.launch({
    executablePath: CHROMIUM,
    // As root Chromium needs --no-sandbox; the proxy makes any request that does leave fail.
    args: ['--no-sandbox', '--disable-gpu', '--proxy-server=127.0.0.1:9', '--proxy-bypass-list=<-loopback>'],
  });
}

/** A page opened on a file, with what it requested beyond that file, its errors and its dialogs. */
export interface OpenedPage {
  page: Page;
  requests: string[];
  errors: string[];
  dialogs: string[];
}

export async function openFile(browser: Browser, file: string): Promise<OpenedPage> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await context.newPage();
  const url = pathToFileURL(file).href;
  const opened: OpenedPage = { page, requests: [], errors: [], dialogs: [] };
  // Every request but the file itself is recorded and refused.
  await context.route('**/*', (route) => {
    const u = route.request().url();
    if (u === url) return route.continue();
    opened.requests.push(u);
    return route.abort();
  });
  page.on('pageerror', (e) => opened.errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') opened.errors.push(m.text());
  });
  page.on('dialog', (d) => {
    opened.dialogs.push(d.message());
    void d.dismiss();
  });
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      (window as unknown as { __violations: string[] }).__violations ??= [];
      (window as unknown as { __violations: string[] }).__violations.push(
        `${e.violatedDirective} ${e.blockedURI}`,
      );
    });
  });
  await page.goto(url);
  await page.waitForSelector('table.cases');
  return opened;
}

/** The CSP violations the page saw so far. */
export async function violations(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as unknown as { __violations?: string[] }).__violations ?? []);
}
