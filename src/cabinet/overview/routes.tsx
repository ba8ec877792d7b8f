import type { FastifyPluginAsync } from 'fastify';
import { DateTime } from 'luxon';
import { shopClock } from '../../context.js';
import type { PageLang } from '../../pages/lang.js';
import { sendPage } from '../../pages/render.js';
import { cabinetOf } from '../context.js';
import type { ChartDay } from './chart.js';
import { type CurrencyMonth, OverviewPage } from './page.js';
import {
  type DayTotal,
  dailyTotals,
  failedCharges,
  retryingSubscriptions,
  stateCounts,
  troubledNotifications,
} from './repository.js';

/** The cabinet's first page: subscriptions by state, the last 30 days' money, and what needs attention. */

const DAYS = 30;
const ATTENTION_ROWS = 10;

/** The 30 days ending today in the shop's zone, as [from, to) instants and one entry per day. */
export function window30(now: Date, zone: string): { from: Date; to: Date; days: DateTime[] } {
  const today = DateTime.fromJSDate(now).setZone(zone).startOf('day');
  const days = Array.from({ length: DAYS }, (_, i) => today.minus({ days: DAYS - 1 - i }));
  return { from: (days[0] as DateTime).toJSDate(), to: today.plus({ days: 1 }).toJSDate(), days };
}

/** One month of bars per currency, the busiest currency first. */
export function currencyMonths(totals: DayTotal[], days: DateTime[], lang: PageLang): CurrencyMonth[] {
  const byCurrency = new Map<string, Map<string, DayTotal>>();
  for (const t of totals) {
    const days = byCurrency.get(t.currency) ?? new Map<string, DayTotal>();
    days.set(t.day, t);
    byCurrency.set(t.currency, days);
  }
  const months = [...byCurrency].map(([currency, totalsByDay]) => {
    const chartDays: ChartDay[] = days.map((d) => {
      const total = totalsByDay.get(d.toFormat('yyyy-MM-dd'));
      return {
        label: d.toFormat('d'),
        date: d.setLocale(lang).toFormat('ccc, d LLL yyyy'),
        revenue: Number(total?.revenue ?? 0),
        paid: Number(total?.paid ?? 0),
        failed: Number(total?.failed ?? 0),
      };
    });
    const sum = (f: (t: DayTotal) => number) =>
      [...totalsByDay.values()].reduce((a, t) => a + Number(f(t)), 0);
    return {
      currency,
      days: chartDays,
      revenue: sum((t) => t.revenue),
      refunded: sum((t) => t.refunded),
      paid: sum((t) => t.paid),
      failed: sum((t) => t.failed),
    };
  });
  return months.sort(
    (a, b) => b.revenue - a.revenue || b.paid - a.paid || a.currency.localeCompare(b.currency),
  );
}

export const overviewRoutes: FastifyPluginAsync = async (app) => {
  app.get('/', async (request, reply) => {
    const cabinet = cabinetOf(request);
    const { db, clock } = request.server.services;
    const shop = cabinet.shop;
    const now = shopClock(clock, shop).now();
    const { from, to, days } = window30(now, shop.timeZone);
    const [states, totals, retrying, failed, notifications] = await Promise.all([
      stateCounts(db, shop.id),
      dailyTotals(db, shop.id, from, to, shop.timeZone),
      retryingSubscriptions(db, shop.id, ATTENTION_ROWS),
      failedCharges(db, shop.id, from, ATTENTION_ROWS),
      troubledNotifications(db, shop.id),
    ]);
    const money = currencyMonths(totals, days, cabinet.lang);
    return sendPage(
      reply,
      200,
      <OverviewPage view={{ cabinet, states, money, retrying, failedCharges: failed, notifications }} />,
    );
  });
};
