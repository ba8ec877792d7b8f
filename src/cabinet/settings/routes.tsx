import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { advanceTestClock, readTestClock, resetTestShop } from '../../billing/index.js';
import type { Services } from '../../context.js';
import { ApiError, type ErrorTree } from '../../core/errors.js';
import { sendPage } from '../../pages/render.js';
import { PageProblem } from '../../pages/scope.js';
import { changeShopSettings, getShopSettings, type ShopSettingsView } from '../../shops/index.js';
import { cabinetOf } from '../context.js';
import { queryText } from '../query.js';
import { type FormErrors, formErrors, formFromBody, formOf, settingsBody } from './form.js';
import { keyActions } from './key-actions.js';
import { SettingsPage } from './pages.js';
import { signingTexts } from './signing-texts.js';
import { type AdvanceForm, type ClockEvent, TestClockPage, UNITS } from './test-clock-page.js';
import { settingsTexts } from './texts.js';

/**
 * The settings section: the shop's settings through the verbs of `GET/PATCH /shop`, and for test
 * shops the test clock through those of `GET /test_clock` and `POST /test_clock/advance`.
 */

const servicesFor = (request: FastifyRequest): Services => ({ ...request.server.services, log: request.log });

const COUNTS = ['runs', 'charged', 'successful', 'failed', 'errors', 'unknown', 'resolved', 'ended'] as const;

/** The subscription events of the shop since `from` (its clock), newest first: what an advance did. */
function eventsSince(services: Services, shopId: number, from: Date, to: Date): Promise<ClockEvent[]> {
  return services.db.query<ClockEvent>(
    `SELECT id, event, resource_id, payload, created_at FROM events
     WHERE shop_id = $1 AND resource_type = 'subscription' AND created_at > $2 AND created_at <= $3
     ORDER BY id DESC LIMIT 50`,
    [shopId, from, to],
  );
}

/** The test clock's 404 for a live shop, as the cabinet's not-found page. */
async function testOnly<T>(request: FastifyRequest, work: () => Promise<T>): Promise<T> {
  const cabinet = cabinetOf(request);
  if (!cabinet.shop.test) throw new PageProblem(404, 'notFound', cabinet.lang);
  try {
    return await work();
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) throw new PageProblem(404, 'notFound', cabinet.lang);
    throw err;
  }
}

const isoOf = (v: string): Date | undefined => {
  if (!/^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/.test(v)) return undefined;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? undefined : d;
};

/** The advance the form asks for: to the date when one is given, else by the amount in its unit. */
function advanceInput(form: AdvanceForm): Record<string, string> | 'amount' {
  if (form.to !== '') return { to: form.to };
  if (!/^\d{1,4}$/.test(form.amount) || Number(form.amount) < 1 || Number(form.amount) > 1000)
    return 'amount';
  const n = Number(form.amount);
  const unit = (UNITS as readonly string[]).includes(form.unit) ? form.unit : 'days';
  return {
    by: unit === 'hours' ? `PT${n}H` : `P${n}${unit === 'days' ? 'D' : unit === 'months' ? 'M' : 'Y'}`,
  };
}

export const settingsSection: FastifyPluginAsync = async (app) => {
  const render = (
    request: FastifyRequest,
    settings: ShopSettingsView,
    form = formOf(settings),
    errors: FormErrors = {},
    saved = false,
    notice: string | undefined = undefined,
  ) => (
    <SettingsPage
      cabinet={cabinetOf(request)}
      settings={settings}
      form={form}
      errors={errors}
      saved={saved}
      notice={notice}
    />
  );

  app.get('/settings', async (request, reply) => {
    const cabinet = cabinetOf(request);
    const settings = await getShopSettings(request.server.services, cabinet.shop.id);
    const done = queryText(request.query, 'done');
    const notice = keyActions.find((a) => a.done === done)?.notice;
    const saved = done === 'saved';
    const said = notice && signingTexts(cabinet.lang)[notice];
    return sendPage(reply, 200, render(request, settings, formOf(settings), {}, saved, said));
  });

  for (const action of keyActions) {
    app.post(`/settings/${action.path}`, { preHandler: app.csrfProtection }, async (request, reply) => {
      const cabinet = cabinetOf(request);
      const services = request.server.services;
      try {
        await action.verb(services, cabinet.shop.id);
      } catch (err) {
        if (!(err instanceof ApiError) || err.status !== 422) throw err;
        const settings = await getShopSettings(services, cabinet.shop.id);
        const base = signingTexts(cabinet.lang).nothingPending;
        return sendPage(reply, 422, render(request, settings, formOf(settings), { base }));
      }
      // As the API's key routes: this process's next request sees the shop's new keys at once.
      request.server.shopAuthenticator.forget(cabinet.shop.id);
      return reply.redirect(`/cabinet/settings?done=${action.done}`, 303);
    });
  }

  app.post('/settings', { preHandler: app.csrfProtection }, async (request, reply) => {
    const cabinet = cabinetOf(request);
    const services = request.server.services;
    const form = formFromBody(request.body);
    try {
      await changeShopSettings(services, cabinet.shop.id, settingsBody(form));
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 422) throw err;
      const settings = await getShopSettings(services, cabinet.shop.id);
      const errors = formErrors(err.errors, {
        ...settingsTexts(cabinet.lang),
        authInvalid: signingTexts(cabinet.lang).authInvalid,
      });
      return sendPage(reply, 422, render(request, settings, form, errors));
    }
    // As PATCH /shop: this process's next API request sees the change at once.
    request.server.shopAuthenticator.forget(cabinet.shop.id);
    return reply.redirect('/cabinet/settings?done=saved', 303);
  });

  const clockPage = async (
    request: FastifyRequest,
    form: AdvanceForm,
    errors: Partial<Record<'amount' | 'to' | 'base', string>>,
  ) => {
    const cabinet = cabinetOf(request);
    const services = servicesFor(request);
    const clock = await readTestClock(services, cabinet.shop.id);
    const now = new Date(clock.now);
    const q = request.query;
    const from = isoOf(queryText(q, 'from'));
    const to = isoOf(queryText(q, 'to'));
    const result =
      from && to
        ? {
            from: from.toISOString(),
            to: to.toISOString(),
            counts: Object.fromEntries(COUNTS.map((k) => [k, String(Number(queryText(q, k)) || 0)])),
          }
        : undefined;
    const events = result && from && to ? await eventsSince(services, cabinet.shop.id, from, to) : [];
    const reset = queryText(q, 'done') === 'reset';
    return (
      <TestClockPage
        cabinet={cabinet}
        now={now}
        offsetSeconds={clock.offset_seconds}
        form={form}
        errors={errors}
        result={result}
        events={events}
        reset={reset}
      />
    );
  };

  app.get('/test-clock', async (request, reply) => {
    const page = await testOnly(request, () =>
      clockPage(request, { amount: '1', unit: 'months', to: '' }, {}),
    );
    return sendPage(reply, 200, page);
  });

  app.post('/test-clock', { preHandler: app.csrfProtection }, async (request, reply) => {
    const cabinet = cabinetOf(request);
    const t = settingsTexts(cabinet.lang);
    const body = (request.body ?? {}) as Record<string, unknown>;
    const field = (name: string) =>
      typeof body[name] === 'string' ? (body[name] as string).trim().slice(0, 64) : '';
    const form: AdvanceForm = { amount: field('amount'), unit: field('unit'), to: field('to') };
    const input = advanceInput(form);
    const refuse = async (errors: Partial<Record<'amount' | 'to' | 'base', string>>) =>
      sendPage(reply, 422, await testOnly(request, () => clockPage(request, form, errors)));
    if (input === 'amount') return refuse({ amount: t.amountInvalid });
    let summary: Awaited<ReturnType<typeof advanceTestClock>>;
    try {
      summary = await testOnly(request, () => advanceTestClock(servicesFor(request), cabinet.shop.id, input));
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 422) throw err;
      const tree: ErrorTree = err.errors;
      const msg = (k: string) => (Array.isArray(tree[k]) ? (tree[k] as string[]).join('; ') : undefined);
      // The verb's reasons in the page's language; a reason it has no words for is shown as it is.
      const say = (m: string | undefined) =>
        m === undefined
          ? undefined
          : m.includes('forward')
            ? t.notForward
            : m.includes('year')
              ? t.tooFar
              : m;
      const by = msg('by');
      const to = say(msg('to'));
      const base = msg('base');
      return refuse({
        ...(by ? { amount: t.amountInvalid } : {}),
        ...(to ? { to } : {}),
        ...(base ? { base: base.includes('billing runs') ? t.tooFar : base } : {}),
      });
    } finally {
      // As POST /test_clock/advance: the API sees the shop's new time at once.
      request.server.shopAuthenticator.forget(cabinet.shop.id);
    }
    const params = new URLSearchParams({ from: summary.advanced_from, to: summary.test_clock.now });
    for (const k of COUNTS) params.set(k, String(summary.billing[k]));
    return reply.redirect(`/cabinet/test-clock?${params}`, 303);
  });

  // A clean start, as POST /test_clock/reset: everything the test shop did deleted, its clock at now.
  app.post('/test-clock/reset', { preHandler: app.csrfProtection }, async (request, reply) => {
    const cabinet = cabinetOf(request);
    try {
      await testOnly(request, () => resetTestShop(servicesFor(request), cabinet.shop.id));
    } finally {
      request.server.shopAuthenticator.forget(cabinet.shop.id);
    }
    return reply.redirect('/cabinet/test-clock?done=reset', 303);
  });
};
