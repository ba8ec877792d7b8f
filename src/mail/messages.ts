import { moneyText } from '../money/currencies.js';
import { formatDate, type Message, oneLine } from './render.js';
import { fill, type MailLanguage, textsFor } from './texts.js';

/** What an e-mail about a subscription tells, read from the outbox's copy of the subscription. */
export interface SubscriptionFacts {
  id: string;
  planTitle: string;
  currency: string;
  customerName: string | null;
  language: MailLanguage;
  receiptText: string[];
  activeTo: string | null;
  renewAt: string | null;
  cancelReason: string | null;
  cancelledAt: string | null;
}

/** One charge of a subscription: its transaction, amount and what the gateway said. */
export interface ChargeFacts {
  uid: string | null;
  amount: number | null;
  at: string | null;
  message: string | null;
}

/** The shop as its e-mails name it, and the zone its dates are shown in. */
export interface ShopFacts {
  name: string;
  timeZone: string;
}

/** A transaction as the gateway answers it, for the shop's notice. */
export interface TransactionFacts {
  uid: string;
  status: string;
  type: string;
  amount: number;
  currency: string;
  description: string | null;
  message: string | null;
  trackingId: string | null;
  createdAt: string;
  test: boolean;
}

function opening(sub: SubscriptionFacts) {
  const t = textsFor(sub.language);
  const hello = sub.customerName ? fill(t.hello, { name: sub.customerName }) : t.helloNoName;
  return { t, hello };
}

function chargeRows(sub: SubscriptionFacts, charge: ChargeFacts, shop: ShopFacts): Message['rows'] {
  const { t } = opening(sub);
  const rows: Message['rows'] = [];
  if (charge.amount !== null) rows.push([t.amount, moneyText(charge.amount, sub.currency, sub.language)]);
  if (charge.at) rows.push([t.date, formatDate(charge.at, shop.timeZone)]);
  rows.push([t.plan, sub.planTitle]);
  rows.push([t.subscription, sub.id]);
  if (charge.uid) rows.push([t.transaction, charge.uid]);
  return rows;
}

export function receiptMessage(shop: ShopFacts, sub: SubscriptionFacts, charge: ChargeFacts): Message {
  const { t, hello } = opening(sub);
  const values = {
    plan: sub.planTitle,
    shop: shop.name,
    amount: charge.amount === null ? '' : moneyText(charge.amount, sub.currency, sub.language),
  };
  const rows = chargeRows(sub, charge, shop);
  if (sub.activeTo) rows.push([t.paidUntil, formatDate(sub.activeTo, shop.timeZone)]);
  if (sub.renewAt) rows.push([t.nextPayment, formatDate(sub.renewAt, shop.timeZone)]);
  return {
    language: sub.language,
    subject: oneLine(fill(t.receiptSubject, values)),
    heading: t.receiptHeading,
    paragraphs: [hello, fill(t.receiptIntro, values)],
    rows,
    notes: sub.receiptText,
    footer: fill(t.footer, values),
  };
}

export function failedMessage(shop: ShopFacts, sub: SubscriptionFacts, charge: ChargeFacts): Message {
  const { t, hello } = opening(sub);
  const values = {
    plan: sub.planTitle,
    shop: shop.name,
    amount: charge.amount === null ? '' : moneyText(charge.amount, sub.currency, sub.language),
  };
  const rows = chargeRows(sub, charge, shop);
  if (charge.message) rows.push([t.reason, charge.message]);
  return {
    language: sub.language,
    subject: oneLine(fill(t.failedSubject, values)),
    heading: t.failedHeading,
    paragraphs: [hello, fill(t.failedIntro, values), t.failedAdvice],
    rows,
    notes: [],
    footer: fill(t.footer, values),
  };
}

export function canceledMessage(shop: ShopFacts, sub: SubscriptionFacts): Message {
  const { t, hello } = opening(sub);
  const date = sub.cancelledAt ? formatDate(sub.cancelledAt, shop.timeZone) : '';
  const values = { plan: sub.planTitle, shop: shop.name, date };
  const rows: Message['rows'] = [
    [t.plan, sub.planTitle],
    [t.subscription, sub.id],
  ];
  if (sub.cancelReason) rows.push([t.reason, sub.cancelReason]);
  if (sub.activeTo) rows.push([t.paidUntil, formatDate(sub.activeTo, shop.timeZone)]);
  return {
    language: sub.language,
    subject: oneLine(fill(t.canceledSubject, values)),
    heading: t.canceledHeading,
    paragraphs: [hello, fill(t.canceledIntro, values)],
    rows,
    notes: [],
    footer: fill(t.footer, values),
  };
}

export function transactionMessage(shop: ShopFacts, txn: TransactionFacts): Message {
  const t = textsFor('en');
  const amount = moneyText(txn.amount, txn.currency, 'en');
  const values = { status: txn.status, type: txn.type, amount, shop: shop.name };
  const rows: Message['rows'] = [
    [t.status, txn.status],
    [t.type, txn.type],
    [t.amount, amount],
    [t.date, formatDate(txn.createdAt, shop.timeZone)],
    [t.transaction, txn.uid],
  ];
  if (txn.description) rows.push([t.description, txn.description]);
  if (txn.message) rows.push([t.message, txn.message]);
  if (txn.trackingId) rows.push([t.trackingId, txn.trackingId]);
  rows.push([t.test, txn.test ? t.yes : t.no]);
  return {
    language: 'en',
    subject: oneLine(fill(t.transactionSubject, values)),
    heading: fill(t.transactionHeading, values),
    paragraphs: [fill(t.transactionIntro, values)],
    rows,
    notes: [],
    footer: fill(t.shopFooter, values),
  };
}
