import type { ComponentChildren } from 'preact';
import type { PageLang } from '../pages/lang.js';
import type { CabinetContext } from './context.js';
import { cabinetTexts } from './texts.js';

/**
 * The parts every cabinet list shares, so a list page states only what is its own (its fields, its
 * columns, its texts): the filter bar (a GET form, so a filtered list is a link) and the table with
 * its "nothing here" line.
 */

/** What a list page is given: the query as typed, one page of rows, the pager's next cursor, the time. */
export interface ListPageProps<Q, R> {
  cabinet: CabinetContext;
  query: Q;
  rows: R[];
  next: number | undefined;
  now: Date;
}

export function FilterBar({
  action,
  label,
  active,
  primary,
  lang,
  children,
}: {
  /** The list's own address; the Reset link goes there too. */
  action: string;
  /** The form's accessible name. */
  label?: string | undefined;
  /** Whether a filter is set, so there is something to reset. */
  active: boolean;
  /** The Filter button as the page's main action. */
  primary?: boolean;
  lang: PageLang;
  children: ComponentChildren;
}) {
  const c = cabinetTexts(lang);
  return (
    <form method="get" action={action} class="filters" aria-label={label}>
      {children}
      <button type="submit" class={primary ? 'primary' : undefined}>
        {c.filter}
      </button>
      {active && <a href={action}>{c.reset}</a>}
    </form>
  );
}

export interface Column<R> {
  label: ComponentChildren;
  /** A number: right-aligned, header and cells alike. */
  num?: boolean;
  /** Extra class of the column's cells (e.g. "copy"). */
  cellClass?: string;
  cell: (row: R) => ComponentChildren;
}

const classes = (...names: Array<string | false | undefined>) => names.filter(Boolean).join(' ') || undefined;

export function ListTable<R>({
  caption,
  captionClass = 'visually-hidden',
  columns,
  rows,
  rowClass,
  empty,
  emptyClass,
}: {
  /** Names the table for screen readers (hidden unless captionClass says otherwise). */
  caption?: ComponentChildren;
  captionClass?: string;
  columns: Array<Column<R>>;
  rows: readonly R[];
  rowClass?: string;
  /** What the page says instead of an empty table. */
  empty: ComponentChildren;
  emptyClass?: string;
}) {
  if (rows.length === 0) return <p class={emptyClass}>{empty}</p>;
  return (
    <div class="table-wrap">
      <table>
        {caption !== undefined && <caption class={captionClass}>{caption}</caption>}
        <thead>
          <tr>
            {columns.map((col) => (
              <th scope="col" class={classes(col.num && 'num')}>
                {col.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr class={rowClass}>
              {columns.map((col) => (
                <td class={classes(col.num && 'num', col.cellClass)}>{col.cell(row)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
