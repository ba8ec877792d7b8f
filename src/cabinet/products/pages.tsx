import { Details, Money } from '../../pages/components.js';
import { fill } from '../../pages/lang.js';
import type { Product, ProductRow } from '../../products/index.js';
import type { CabinetContext } from '../context.js';
import { CabinetPage } from '../layout.js';
import { ListTable } from '../list.js';
import { Pager } from '../paging.js';
import { When } from '../payments/view.js';
import { cabinetTexts } from '../texts.js';
import { languageName } from '../words.js';
import { productTexts } from './texts.js';

/** The products list and a product's page with its payment links. */

type T = ReturnType<typeof productTexts>;

export interface ProductState {
  soldOut: boolean;
  expired: boolean;
}

/** Whether buyers can still pay: stock left, and the time to pay not over (an immortal product has none). */
export function productState(
  p: Pick<ProductRow, 'infinite' | 'quantity' | 'immortal' | 'expires_at'>,
  now: Date,
) {
  return {
    soldOut: !p.infinite && Number(p.quantity ?? 0) <= 0,
    expired: !p.immortal && p.expires_at !== null && p.expires_at.getTime() <= now.getTime(),
  };
}

function Stock({ p, t }: { p: Pick<ProductRow, 'infinite' | 'quantity'>; t: T }) {
  return <>{p.infinite ? t.unlimited : Number(p.quantity ?? 0)}</>;
}

function StateBadges({ s, test, t }: { s: ProductState; test: boolean; t: T }) {
  return (
    <>
      {s.soldOut && <span class="badge failed">{t.soldOut}</span>}{' '}
      {s.expired && <span class="badge expired">{t.expired}</span>}
      {test && <span class="badge test">{t.test}</span>}
    </>
  );
}

export function ProductsPage({
  cabinet,
  rows,
  next,
  query,
  now,
}: {
  cabinet: CabinetContext;
  rows: ProductRow[];
  next: number | undefined;
  query: Record<string, string | undefined>;
  now: Date;
}) {
  const t = productTexts(cabinet.lang);
  return (
    <CabinetPage cabinet={cabinet} title={t.title} section="products">
      <ListTable
        caption={t.caption}
        empty={cabinetTexts(cabinet.lang).empty}
        rows={rows}
        columns={[
          {
            label: t.name,
            cell: (p) => (
              <>
                <a href={`/cabinet/products/${p.id}`}>{p.name}</a>{' '}
                <StateBadges s={productState(p, now)} test={p.test} t={t} />
              </>
            ),
          },
          {
            label: t.amount,
            num: true,
            cell: (p) => <Money amount={Number(p.amount)} currency={p.currency} lang={cabinet.lang} />,
          },
          { label: t.stock, num: true, cell: (p) => <Stock p={p} t={t} /> },
          { label: t.created, cell: (p) => <When at={p.created_at} cabinet={cabinet} /> },
        ]}
      />
      <Pager lang={cabinet.lang} path="/cabinet/products" query={query} next={next} />
    </CabinetPage>
  );
}

/** A link in a read-only field that can be selected by hand, with a Copy button when scripts run. */
function CopyField({ id, label, value, t }: { id: string; label: string; value: string; t: T }) {
  return (
    <div class="field copy-field">
      <label for={id}>{label}</label>
      <div class="copy-row">
        <input id={id} type="text" class="copy" value={value} readOnly />
        <button type="button" data-copy={id} data-copied={t.copied} data-failed={t.copyFailed} hidden>
          {t.copy}
        </button>
      </div>
      <p class="hint" id={`${id}-copied`} role="status" aria-live="polite" />
    </div>
  );
}

export function ProductPage({
  cabinet,
  product,
  row,
  now,
}: {
  cabinet: CabinetContext;
  product: Product;
  row: ProductRow;
  now: Date;
}) {
  const t = productTexts(cabinet.lang);
  const state = productState(row, now);
  const fields = product.visible_fields;
  return (
    <CabinetPage cabinet={cabinet} title={product.name} section="products" scripts={['copy.js']}>
      <p>
        <a href="/cabinet/products">{t.allProducts}</a>
      </p>
      <p class="headline">
        <Money amount={product.amount} currency={product.currency} lang={cabinet.lang} />{' '}
        <StateBadges s={state} test={product.test} t={t} />
      </p>
      <section aria-labelledby="links">
        <h2 id="links">{t.links}</h2>
        <p>{t.linksIntro}</p>
        <CopyField id="pay-url" label={t.payUrl} value={product.pay_url} t={t} />
        <CopyField id="confirm-url" label={t.confirmUrl} value={product.confirm_url} t={t} />
      </section>
      <section aria-labelledby="details">
        <h2 id="details">{t.details}</h2>
        <Details
          rows={[
            [t.id, <span class="copy">{product.id}</span>],
            [t.description, <span class="multiline">{product.description}</span>],
            [
              t.stock,
              product.quantity === null ? t.unlimited : fill(t.left, { n: Number(product.quantity) }),
            ],
            [t.transactionType, t[product.transaction_type]],
            [t.language, languageName(product.language, cabinet.lang)],
            [t.visibleFields, fields.length > 0 ? fields.join(', ') : t.noFields],
            [
              t.expiry,
              product.immortal || !row.expires_at ? t.never : <When at={row.expires_at} cabinet={cabinet} />,
            ],
            [t.returnUrl, product.return_url ? <span class="copy">{product.return_url}</span> : t.none],
            [t.mode, product.test ? t.testMode : t.live],
            [t.created, <When at={row.created_at} cabinet={cabinet} />],
            [t.updated, <When at={row.updated_at} cabinet={cabinet} />],
          ]}
        />
      </section>
    </CabinetPage>
  );
}
