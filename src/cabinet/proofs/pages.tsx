import { Details, Field, Money } from '../../pages/components.js';
import { fill } from '../../pages/lang.js';
import type { CabinetContext } from '../context.js';
import { CabinetPage } from '../layout.js';
import { FilterBar, ListTable } from '../list.js';
import { Pager } from '../paging.js';
import { Badge, shortUid, When } from '../payments/view.js';
import { cabinetTexts } from '../texts.js';
import { GatewayMessage } from '../words.js';
import type { ProofListRow } from './repository.js';
import { proofTexts } from './texts.js';

/** The proofs list and a proof's page: the document previewed when it is an image, always downloadable. */

type T = ReturnType<typeof proofTexts>;

/** Image types the browser may show inline; a PDF is only downloaded (see routes.tsx). */
export const PREVIEWABLE = new Set(['image/png', 'image/jpeg']);

function size(t: T, n: number): string {
  if (n < 1024) return fill(t.bytes, { n });
  if (n < 1024 * 1024) return fill(t.kib, { n: (n / 1024).toFixed(1) });
  return fill(t.mib, { n: (n / 1024 / 1024).toFixed(1) });
}

const kind = (contentType: string) => contentType.split('/')[1]?.toUpperCase() ?? contentType;

function Match({ row, t }: { row: ProofListRow; t: T }) {
  const ok = row.proof?.status === 'successful';
  return <Badge state={ok ? 'successful' : 'failed'}>{ok ? t.matches : t.differs}</Badge>;
}

export function ProofsPage({
  cabinet,
  rows,
  next,
  transaction,
  error,
}: {
  cabinet: CabinetContext;
  rows: ProofListRow[];
  next: number | undefined;
  transaction: string | undefined;
  error: string | undefined;
}) {
  const t = proofTexts(cabinet.lang);
  const c = cabinetTexts(cabinet.lang);
  return (
    <CabinetPage cabinet={cabinet} title={t.title} section="proofs">
      <FilterBar
        action="/cabinet/proofs"
        label={t.filterLabel}
        active={Boolean(transaction)}
        lang={cabinet.lang}
      >
        <Field
          name="transaction"
          label={t.transaction}
          value={transaction}
          error={error}
          maxLength={64}
          size="wide"
        />
      </FilterBar>
      <ListTable
        caption={t.caption}
        empty={transaction ? t.none : c.empty}
        rows={rows}
        columns={[
          { label: t.uploaded, cell: (r) => <When at={r.created_at} cabinet={cabinet} /> },
          { label: t.file, cell: (r) => <a href={`/cabinet/proofs/${r.uid}`}>{r.file_name}</a> },
          {
            label: t.transaction,
            cell: (r) => (
              <a href={`/cabinet/payments/${r.parent_uid}`} class="copy">
                {shortUid(r.parent_uid)}
              </a>
            ),
          },
          { label: t.type, cell: (r) => kind(r.content_type) },
          { label: t.size, num: true, cell: (r) => size(t, Number(r.size)) },
          {
            label: t.amount,
            num: true,
            cell: (r) => <Money amount={Number(r.amount)} currency={r.currency} lang={cabinet.lang} />,
          },
          { label: t.match, cell: (r) => <Match row={r} t={t} /> },
        ]}
      />
      <Pager lang={cabinet.lang} path="/cabinet/proofs" query={{ transaction }} next={next} />
    </CabinetPage>
  );
}

export function ProofPage({ cabinet, row }: { cabinet: CabinetContext; row: ProofListRow }) {
  const t = proofTexts(cabinet.lang);
  const base = `/cabinet/proofs/${row.uid}`;
  return (
    <CabinetPage cabinet={cabinet} title={row.file_name} section="proofs">
      <p>
        <a href="/cabinet/proofs">{t.allProofs}</a>
      </p>
      <p>
        <a class="button primary" href={`${base}/download`} download={row.file_name}>
          {fill(t.download, { name: row.file_name })}
        </a>
      </p>
      <section aria-labelledby="details">
        <h2 id="details">{t.details}</h2>
        <Details
          rows={[
            [t.proofUid, <span class="copy">{row.uid}</span>],
            [
              t.transaction,
              <a href={`/cabinet/payments/${row.parent_uid}`} class="copy">
                {row.parent_uid}
              </a>,
            ],
            [t.amount, <Money amount={Number(row.amount)} currency={row.currency} lang={cabinet.lang} />],
            [
              t.comparison,
              <>
                <Match row={row} t={t} /> <GatewayMessage message={row.proof?.message} lang={cabinet.lang} />
              </>,
            ],
            [t.reference, row.transaction_reference ?? '—'],
            [t.type, kind(row.content_type)],
            [t.size, size(t, Number(row.size))],
            [t.uploaded, <When at={row.created_at} cabinet={cabinet} />],
          ]}
        />
      </section>
      <section aria-labelledby="preview">
        <h2 id="preview">{t.preview}</h2>
        {PREVIEWABLE.has(row.content_type) ? (
          <img
            class="proof-preview"
            src={`${base}/preview`}
            alt={fill(t.imageAlt, { name: row.file_name })}
          />
        ) : (
          <p>{t.pdfNote}</p>
        )}
      </section>
    </CabinetPage>
  );
}
