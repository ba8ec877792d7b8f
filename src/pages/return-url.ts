/**
 * The shop's return address with a payment's result: `uid` and `status` added (with `&` after an
 * existing query, before any fragment). Only http(s) addresses; the URL's own serialisation keeps the
 * Location header ASCII whatever the shop wrote. Shared by every page that sends a buyer back.
 */
export function returnUrlWithResult(url: string, uid: string, status: string): string | null {
  let href: string;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
    href = parsed.href;
  } catch {
    return null;
  }
  const hash = href.indexOf('#');
  const base = hash === -1 ? href : href.slice(0, hash);
  const fragment = hash === -1 ? '' : href.slice(hash);
  const joiner = !base.includes('?') ? '?' : base.endsWith('?') || base.endsWith('&') ? '' : '&';
  return `${base}${joiner}uid=${encodeURIComponent(uid)}&status=${encodeURIComponent(status)}${fragment}`;
}

/**
 * The shop's site when the shop gave no address for this end of a payment: the home page (origin)
 * of the first http(s) address it gave for buyers, e.g. `https://shop.example/` of its success URL.
 */
export function shopSiteOf(urls: ReadonlyArray<string | null | undefined>): string | null {
  for (const url of urls) {
    if (!url) continue;
    try {
      const parsed = new URL(url);
      if (parsed.protocol === 'http:' || parsed.protocol === 'https:') return `${parsed.origin}/`;
    } catch {
      // Not an address: try the next.
    }
  }
  return null;
}
