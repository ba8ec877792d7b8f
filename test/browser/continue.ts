import type { Page } from 'playwright-core';
import { expect } from 'vitest';

/**
 * How a checkout's result page sends the buyer on, checked without the test waiting for it.
 *
 * A result page continues to the shop by itself after 3 s: by a script (checkout-continue.js and
 * its link's data-continue-after) or, on product pages, by `<meta http-equiv="refresh">`, which
 * works without scripts. A test checks the delay the page asks for and then moves on at once.
 */

/** The delay a buyer waits before a result page continues on its own. */
export const CONTINUE_SECONDS = 3;

/**
 * The scripted continue: the link names the 3 s delay, and moving the page's clock by that much
 * sends the browser on by itself. Needs a page of `withPage(fn, { clock: true })`, whose clock
 * stands still until then; the caller then waits for the URL it expects.
 */
export async function runScriptedContinue(page: Page): Promise<void> {
  const link = page.locator('a[data-continue-after]');
  expect(await link.getAttribute('data-continue-after')).toBe(String(CONTINUE_SECONDS));
  // The script sets its timer as the page loads; after that the clock may move.
  await page.waitForLoadState('load');
  await page.clock.runFor(CONTINUE_SECONDS * 1000);
}

/**
 * Holds the tab's requests to the shop's site (`shopUrl`) until the answered function is called. A
 * result page that continues to the shop by itself after 3 s then stays on screen, for the test's
 * checks and screenshot, however slowly a loaded machine gets to look: the browser still starts
 * for the shop on its own; only its arrival waits. Release before waiting for the arrival.
 */
export async function holdArrival(page: Page, shopUrl: string): Promise<() => void> {
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  await page.route(
    (url) => url.origin === new URL(shopUrl).origin,
    async (route) => {
      await released;
      await route.fallback();
    },
  );
  return release;
}

/** The pages a browser tab was served, each kept as it arrived (see refreshTarget). */
export interface ServedPages {
  /** The HTML of the last page the tab was served from `origin`. */
  lastFrom(origin: string): Promise<string>;
}

/**
 * Keeps the HTML of every page the tab opens, as the server sent it, from the moment it arrives:
 * a page that refreshes itself after 3 s may be gone by the time a busy machine gets to look.
 */
export function keepServedPages(page: Page): ServedPages {
  const served: { origin: string; html: Promise<string> }[] = [];
  page.on('response', (response) => {
    const request = response.request();
    if (!request.isNavigationRequest() || request.frame() !== page.mainFrame() || response.status() !== 200) {
      return;
    }
    const html = response.text();
    html.catch(() => undefined);
    served.push({ origin: new URL(response.url()).origin, html });
  });
  return {
    lastFrom(origin) {
      const last = served.filter((p) => p.origin === origin).at(-1);
      return last ? last.html : Promise.reject(new Error(`no page was served from ${origin}`));
    },
  };
}

const ENTITIES: Record<string, string> = { amp: '&', quot: '"', lt: '<', gt: '>', '#39': "'" };

/**
 * The `<meta http-equiv="refresh">` of the last page served from `origin` (a result page): it
 * names the 3 s delay and where it goes. Answers that address, resolved against the page, for
 * followRefresh.
 */
export async function refreshTarget(served: ServedPages, origin: string): Promise<string> {
  const html = await served.lastFrom(origin);
  const content = /<meta http-equiv="refresh" content="([^"]*)"/.exec(html)?.[1];
  const match = /^(\d+);url=(.+)$/.exec(
    content?.replace(/&(amp|quot|lt|gt|#39);/g, (_, e) => ENTITIES[e] ?? _) ?? '',
  );
  expect(match, `refresh of the page served from ${origin}: ${content}`).not.toBeNull();
  expect(Number(match?.[1])).toBe(CONTINUE_SECONDS);
  return new URL(match?.[2] ?? '', origin).href;
}

/**
 * Goes now where the page's refresh (refreshTarget) would take the browser in 3 s; the caller then
 * waits for the URL it expects.
 */
export async function followRefresh(page: Page, target: string): Promise<void> {
  await page.goto(target).catch((error: unknown) => {
    // On a slow machine the refresh itself may start meanwhile (or, held by holdArrival, go on once
    // released) and cut this one short; it goes to the same address.
    if (!/interrupted by another navigation|net::ERR_ABORTED/.test(String(error))) throw error;
  });
}
