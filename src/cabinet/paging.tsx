import type { PageLang } from '../pages/lang.js';
import { cabinetTexts } from './texts.js';

/**
 * Keyset paging for the cabinet's lists: a page is "rows older than this `seq`", so page 1,000 of a
 * million rows costs what page 1 costs. `after` is the last row's seq of the page before.
 */
export const CABINET_PAGE_SIZE = 50;

/** The `after` query value as a seq, or undefined for the first page (anything else is ignored). */
export function cursorOf(after: unknown): number | undefined {
  if (typeof after !== 'string' || !/^\d{1,18}$/.test(after)) return undefined;
  const n = Number(after);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/**
 * Cuts a page fetched with LIMIT size + 1 (newest first) and gives the cursor of the next page,
 * when there is one.
 */
export function pageOf<R extends { seq: number | string }>(
  rows: R[],
  size = CABINET_PAGE_SIZE,
): { rows: R[]; next: number | undefined } {
  if (rows.length <= size) return { rows, next: undefined };
  const page = rows.slice(0, size);
  return { rows: page, next: Number(page[page.length - 1]?.seq) };
}

/** A link keeping the current filters, with `after` set (or dropped for the first page). */
export function pageHref(path: string, query: Record<string, string | undefined>, after?: number): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query))
    if (v !== undefined && v !== '' && k !== 'after') params.set(k, v);
  if (after !== undefined) params.set('after', String(after));
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

export function Pager({
  lang,
  path,
  query,
  next,
}: {
  lang: PageLang;
  path: string;
  query: Record<string, string | undefined>;
  next: number | undefined;
}) {
  const t = cabinetTexts(lang);
  const paged = query.after !== undefined && query.after !== '';
  if (!paged && next === undefined) return null;
  return (
    <nav class="pager" aria-label="Pages">
      {paged && <a href={pageHref(path, query)}>{t.previous}</a>}
      {next !== undefined && (
        <a href={pageHref(path, query, next)} rel="next">
          {t.next}
        </a>
      )}
    </nav>
  );
}
