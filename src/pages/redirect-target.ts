/**
 * Where a redirect that a request asks for may go. Every Location whose target comes from the
 * request (the cabinet's `next` after signing in, its language switch's `back`, the page a visitor
 * without a session wanted) is written by `sameOriginPath`: a path of this origin under the allowed
 * prefix, percent-encoded, so the header is always plain ASCII. Anything else (another origin, a
 * scheme, a path outside the prefix, a control character, a value too long) gives the fallback.
 * Redirects to the shop's own site (its return_url) are not request targets: return-url.ts serialises
 * them through URL as well.
 */

/** Only the shape of the origin matters: the target is resolved against it and must stay on it. */
const ORIGIN = 'http://kopek.invalid';

/** Longer than any address a page of Kopek has; a longer one is nobody's link. */
const MAX_LENGTH = 2048;

// C0 controls, DEL and the C1 controls: the URL parser would silently drop tabs and line breaks,
// and Node refuses them in a header; no link of Kopek has them.
// biome-ignore lint/suspicious/noControlCharactersInRegex: this is the test for control characters
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** What a Location of Kopek's may hold: a path (not `//`, another host) of RFC 3986's characters only. */
const LOCATION = /^\/(?!\/)[A-Za-z0-9\-._~:/?@!$&'()*+,;=%]*$/;

/**
 * `target` as a same-origin path under `prefix` (e.g. `/cabinet`: the prefix itself or below it),
 * with its query, percent-encoded; `fallback` when it is anything else. Dot segments are resolved
 * before the prefix is checked (`/cabinet/../x` is `/x`, refused), characters beyond ASCII are
 * written in UTF-8 escapes, and a `%` that starts no escape is escaped itself. The fragment is left
 * out: a browser keeps its own.
 */
export function sameOriginPath(target: unknown, prefix: string, fallback: string): string {
  if (typeof target !== 'string' || target.length > MAX_LENGTH || !target.startsWith('/')) return fallback;
  if (CONTROL.test(target)) return fallback;
  let url: URL;
  try {
    url = new URL(target, ORIGIN);
  } catch {
    return fallback;
  }
  if (url.origin !== ORIGIN || url.username !== '' || url.password !== '') return fallback;
  const path = url.pathname;
  if (path !== prefix && !path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`)) return fallback;
  // An empty segment is no page of Kopek's, and `//host` anywhere looks like another site to a reader.
  if (path.includes('//')) return fallback;
  // The URL's serialisation is ASCII; what RFC 3986 leaves out of an address (`\`, `{`, `|`, a `%`
  // that starts no escape) is escaped too, so every client reads the same path.
  const written = `${path}${url.search}`
    .replace(/%(?![0-9A-Fa-f]{2})/g, '%25')
    .replace(
      /[^A-Za-z0-9\-._~:/?@!$&'()*+,;=%]/g,
      (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
    );
  return LOCATION.test(written) ? written : fallback;
}
