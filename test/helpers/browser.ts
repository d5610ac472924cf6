/**
 * A real browser for the web application's tests: Debian's Chromium driven by
 * playwright-core. Without Chromium the suites are skipped, saying so; in CI
 * (CI=true, where .ci/run installs it) a missing browser fails the run.
 * Screenshots go to test-artifacts/ (not committed).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { StoreKind } from './stores.ts';

/**
 * The store the browser walks run on: one, SQLite, the store `npm start` uses.
 * A page works the same whichever store serves it, and the routes it calls are
 * tested on both stores (test/web/app-api.test.ts and the public API's suites);
 * walking every page twice would double the suite's longest files for nothing.
 */
export const BROWSER_STORES: readonly StoreKind[] = ['sqlite'];

export const CHROMIUM = process.env.HERALD_TEST_CHROMIUM || '/usr/bin/chromium';
const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const ARTIFACTS = path.join(ROOT, 'test-artifacts', 'screenshots');

/** The suite's skip option: a reason when no browser is installed (never in CI). */
export function browserSuite(): { skip: string | false } {
  if (fs.existsSync(CHROMIUM)) return { skip: false };
  if (process.env.CI === 'true') throw new Error(`CI=true requires Chromium at ${CHROMIUM} (apt-get install chromium), but it is not there`);
  return { skip: `Chromium not installed at ${CHROMIUM} (apt-get install chromium, or set HERALD_TEST_CHROMIUM)` };
}

/** Builds the web application when its build is missing or older than its sources, as `herald start` does. */
export function ensureWebBuilt(): void {
  const result = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build-web.mjs'), '--if-stale'], { stdio: 'inherit' });
  if (result.status !== 0) throw new Error('building the web application failed');
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

export interface ContextOptions {
  phone?: boolean;
  /** Needed to inject axe-core past the page's Content-Security-Policy. */
  bypassCSP?: boolean;
  acceptDownloads?: boolean;
}

/** A browser context on a desktop (or a 390 px phone), in UTC and British English, signed in with `person`'s session cookies when given. */
export async function browserContext(
  browser: Browser,
  heraldUrl: string,
  person?: { jar: Map<string, string> },
  options: ContextOptions = {},
): Promise<BrowserContext> {
  const viewport = options.phone ? { width: 390, height: 844 } : { width: 1280, height: 900 };
  const context = await browser.newContext({
    viewport,
    timezoneId: 'UTC',
    locale: 'en-GB',
    bypassCSP: options.bypassCSP,
    acceptDownloads: options.acceptDownloads,
  });
  if (person) {
    await context.addCookies(
      [...person.jar].map(([name, value]) => ({ name, value, url: heraldUrl, httpOnly: name === 'herald_session', sameSite: 'Lax' as const })),
    );
  }
  return context;
}

export async function screenshot(page: Page, folder: string, name: string): Promise<void> {
  const dir = path.join(ARTIFACTS, folder);
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true });
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core's serious and critical findings on the page as it is now (the page's context must bypass CSP to load axe). */
export async function seriousA11yViolations(page: Page): Promise<AxeViolation[]> {
  await page.addScriptTag({ path: path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js') });
  const violations = (await page.evaluate(async () => (await (window as any).axe.run(document, { resultTypes: ['violations'] })).violations)) as AxeViolation[];
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

export function describeViolations(violations: AxeViolation[]): string {
  return violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`).join('\n');
}
