import type { FastifyRequest } from 'fastify';
import { DateTime } from 'luxon';
import type { ComponentChildren } from 'preact';
import { type Ctx, shopCtx } from '../../context.js';
import { currencyExponent } from '../../money/currencies.js';
import { brandName } from '../../pages/brand.js';
import type { PageLang } from '../../pages/lang.js';
import type { CabinetContext } from '../context.js';
import { cabinetOf } from '../context.js';

/**
 * Pieces the payments, products, customers and proofs pages share: the verbs' context for the
 * signed-in shop, times in the shop's zone, status badges and amounts typed by people.
 */

/** The context the feature verbs take, for the signed-in shop on its own clock (a test shop's too). */
export function cabinetCtx(request: FastifyRequest): Ctx {
  return shopCtx({ ...request.server.services, log: request.log }, cabinetOf(request).shop);
}

const FORMATS: Record<PageLang, string> = { en: 'd MMM yyyy, HH:mm', ru: 'd MMM yyyy, HH:mm' };

/** An instant in the shop's time zone, with the zone named, machine-readable in `datetime`. */
export function When({ at, cabinet }: { at: Date | string | null | undefined; cabinet: CabinetContext }) {
  if (at === null || at === undefined) return <span class="muted">—</span>;
  const instant = typeof at === 'string' ? DateTime.fromISO(at) : DateTime.fromJSDate(at);
  const local = instant.setZone(cabinet.shop.timeZone).setLocale(cabinet.lang);
  return (
    <time datetime={instant.toUTC().toISO() ?? ''}>
      {local.toFormat(FORMATS[cabinet.lang])} <span class="muted">{local.toFormat('ZZZZ')}</span>
    </time>
  );
}

/** A state as a coloured badge; the word itself carries the meaning, the colour only repeats it. */
export function Badge({ state, children }: { state: string; children: ComponentChildren }) {
  return <span class={`badge ${state.replace(/[^a-z_]/g, '')}`}>{children}</span>;
}

/** The first part of a uid, enough to tell rows apart in a list; the full uid is on the detail page. */
export const shortUid = (uid: string): string => uid.slice(0, 8);

/**
 * An amount as people type it ("12.50", "12,5", "12") in minor units of `currency`, or undefined
 * when it is not a positive amount with at most the currency's decimals.
 */
export function parseAmount(text: unknown, currency: string): number | undefined {
  if (typeof text !== 'string') return undefined;
  const exp = currencyExponent(currency);
  const m = /^(\d{1,15})(?:[.,](\d*))?$/.exec(text.trim().replace(/[\s\u00a0]/g, ''));
  if (!m) return undefined;
  const frac = m[2] ?? '';
  if (frac.length > exp) return undefined;
  const minor = Number(m[1]) * 10 ** exp + Number(frac.padEnd(exp, '0') || '0');
  return Number.isSafeInteger(minor) && minor > 0 ? minor : undefined;
}

/** Minor units as the amount field shows them by default ("12.50" for 1250 EUR). */
export function amountInput(minor: number, currency: string): string {
  const exp = currencyExponent(currency);
  if (exp === 0) return String(minor);
  const digits = String(minor).padStart(exp + 1, '0');
  return `${digits.slice(0, -exp)}.${digits.slice(-exp)}`;
}

/** A single query value as text (Fastify gives arrays for repeated keys). */
export function queryText(v: unknown, max = 255): string | undefined {
  if (Array.isArray(v)) return queryText(v[0], max);
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  return t === '' ? undefined : t.slice(0, max);
}

/** The card as people recognise it: brand and last four digits. */
export function CardSummary({ card }: { card: Record<string, unknown> | null }) {
  if (!card || typeof card.last_4 !== 'string') return <span class="muted">—</span>;
  const brand = brandName(typeof card.brand === 'string' ? card.brand : null);
  return (
    <span class="card-summary">
      {brand && <span class="card-brand">{brand}</span>}
      {brand ? ' ' : ''}•••• {card.last_4}
    </span>
  );
}
