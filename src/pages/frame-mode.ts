/**
 * How a checkout page is shown (docs/embedding.md): at the top of the buyer's window (no mode), in a
 * frame on the shop's page (`inline`, `overlay`: the platform widget's `&iframe=` parameter), or in a
 * window of its own on a phone (`phone`). The mode travels with the page's address, its form and its
 * redirects (3-D Secure included), so every page of one payment is laid out alike; whether the page
 * really is in a frame its script sees for itself.
 */
export const FRAME_MODES = ['inline', 'overlay', 'phone'] as const;
export type FrameMode = (typeof FRAME_MODES)[number];

/** The mode a query parameter or form field names; `true`/`1` (the API's `iframe: true`) is inline. */
export function frameModeOf(value: unknown): FrameMode | undefined {
  if (typeof value !== 'string') return undefined;
  if ((FRAME_MODES as readonly string[]).includes(value)) return value as FrameMode;
  if (value === 'true' || value === '1') return 'inline';
  return undefined;
}

/** The mode an address carries in its `iframe` parameter, if any. */
export function frameModeOfUrl(url: string | null | undefined): FrameMode | undefined {
  if (!url) return undefined;
  try {
    return frameModeOf(new URL(url).searchParams.get('iframe') ?? undefined);
  } catch {
    return undefined;
  }
}

/** `url` with `iframe=<mode>` added to its query (before any fragment); unchanged without a mode. */
export function withFrameMode(url: string, mode: FrameMode | undefined): string {
  if (!mode) return url;
  const hash = url.indexOf('#');
  const base = hash === -1 ? url : url.slice(0, hash);
  const fragment = hash === -1 ? '' : url.slice(hash);
  const joiner = !base.includes('?') ? '?' : base.endsWith('?') || base.endsWith('&') ? '' : '&';
  return `${base}${joiner}iframe=${mode}${fragment}`;
}
