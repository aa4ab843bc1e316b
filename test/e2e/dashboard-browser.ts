/**
 * Debian's Chromium driven by playwright-core for the dashboard's browser test (never a downloaded
 * browser): a fresh profile in a temp directory, headless, no network services of its own, and a
 * page that records every console error, page error, failed request and request to a host other
 * than the kiln server, so the test can assert there were none.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Where Debian installs Chromium (.ci/run installs it). */
export const CHROMIUM = '/usr/bin/chromium';

/** Flags: headless, no sandbox (containers, root), nothing that phones home or updates itself. */
export const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** A page on the dashboard and what it did that a test must not see. */
export interface DashboardBrowser {
  page: Page;
  /** Console messages of type `error` and uncaught page errors, as text. */
  errors: string[];
  /** URLs requested from a host other than the kiln server. */
  foreignRequests: string[];
  /** Requests that failed (network error, aborted), as `METHOD url: reason`. */
  failedRequests: string[];
  close(): Promise<void>;
}

/** Launches Chromium with a fresh profile and opens one page; `base` is the kiln server's origin. */
export async function openDashboardBrowser(base: string): Promise<DashboardBrowser> {
  const profile = await mkdtemp(join(tmpdir(), 'kiln-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_FLAGS,
      viewport: { width: 1400, height: 900 },
      timeout: 60_000,
    });
  } catch (err) {
    await rm(profile, { recursive: true, force: true });
    throw err;
  }
  const origin = new URL(base).origin;
  const errors: string[] = [];
  const foreignRequests: string[] = [];
  const failedRequests: string[] = [];
  context.on('request', (request) => {
    const url = request.url();
    if (/^(https?|wss?):/.test(url) && new URL(url).origin !== origin) foreignRequests.push(url);
  });
  context.on('requestfailed', (request) => failedRequests.push(`${request.method()} ${request.url()}: ${request.failure()?.errorText ?? '?'}`));
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
  return {
    page,
    errors,
    foreignRequests,
    failedRequests,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Clicks the confirm button of the dashboard's confirmation dialog (the question must be open). */
export async function acceptConfirmation(page: Page): Promise<void> {
  const dialog = page.locator('dialog.confirm[open]');
  await dialog.waitFor({ timeout: 10_000 });
  await dialog.locator('[data-action="confirm"]').click();
  await dialog.waitFor({ state: 'detached', timeout: 10_000 });
}
