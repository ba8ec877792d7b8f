import { isoString } from '../clock.js';
import type { Ctx } from '../context.js';
import { ApiError, ErrorCollector } from '../core/errors.js';
import { type ListParams, unknownCursor } from '../core/paging.js';
import { notificationId } from './attempt.js';
import { LEASE_MS } from './deliver.js';
import type { EventRow, NotificationStatus } from './queue.js';
import { type AttemptRow, attemptsOf, findEvent, listEvents, resendEvent } from './repository.js';

/** The shop's view of its notifications: what was sent where, each attempt, and a resend. */

export const NOTIFICATION_STATUSES: readonly NotificationStatus[] = ['pending', 'delivered', 'failed'];

export interface AttemptView {
  n: number;
  at: string;
  status_code: number | null;
  duration_ms: number;
  response: string | null;
  error: string | null;
}

export interface NotificationView {
  id: string;
  event: string;
  resource_type: string;
  resource_id: string;
  url: string;
  status: NotificationStatus;
  attempt_count: number;
  next_attempt_at: string | null;
  delivered_at: string | null;
  created_at: string;
  /** The body sent, exactly as the receiver gets it (parsed). */
  payload: Record<string, unknown>;
  attempts?: AttemptView[];
}

const iso = (d: Date | null) => (d === null ? null : isoString(d));

function toView(r: EventRow, attempts?: AttemptRow[]): NotificationView {
  const view: NotificationView = {
    id: notificationId(r.id),
    event: r.event,
    resource_type: r.resource_type,
    resource_id: r.resource_id,
    url: r.url ?? '',
    status: r.status as NotificationStatus,
    attempt_count: r.attempts,
    next_attempt_at: r.status === 'pending' ? iso(r.next_attempt_at) : null,
    delivered_at: iso(r.delivered_at),
    created_at: isoString(r.created_at),
    payload: r.payload,
  };
  if (attempts) {
    view.attempts = attempts.map((a) => ({
      n: a.n,
      at: isoString(a.at),
      status_code: a.status_code,
      duration_ms: a.duration_ms,
      response: a.response,
      error: a.error,
    }));
  }
  return view;
}

/** The event id behind `evt_<n>`; undefined for anything else (answered as an unknown id). */
function eventIdOf(id: string): number | undefined {
  const m = /^evt_([1-9]\d{0,15})$/.exec(id);
  return m ? Number(m[1]) : undefined;
}

export interface ListFilter {
  resource_id?: string | undefined;
  event?: string | undefined;
  status?: string | undefined;
}

export async function listNotifications(
  ctx: Ctx,
  filter: ListFilter,
  params: ListParams,
): Promise<NotificationView[]> {
  const errors = new ErrorCollector();
  const status = filter.status;
  if (status !== undefined && !(NOTIFICATION_STATUSES as readonly string[]).includes(status))
    errors.add('status', 'is not included in the list');
  errors.throwIfAny();
  let before: number | undefined;
  if (params.startingAfter !== undefined) {
    before = eventIdOf(params.startingAfter);
    if (before === undefined || !(await findEvent(ctx.db, ctx.shop.id, before))) throw unknownCursor();
  }
  const rows = await listEvents(
    ctx.db,
    ctx.shop.id,
    {
      ...(filter.resource_id ? { resourceId: filter.resource_id } : {}),
      ...(filter.event ? { event: filter.event } : {}),
      ...(status ? { status: status as NotificationStatus } : {}),
    },
    params.limit,
    before,
  );
  return rows.map((r) => toView(r));
}

export async function getNotification(ctx: Ctx, id: string): Promise<NotificationView> {
  return (await getNotificationAsSent(ctx, id)).view;
}

/**
 * The notification, and the Kopek-Signature header its last attempt went with (null before any
 * attempt): the cabinet shows the headers as they were sent.
 */
export async function getNotificationAsSent(
  ctx: Ctx,
  id: string,
): Promise<{ view: NotificationView; lastKopekSignature: string | null }> {
  const eventId = eventIdOf(id);
  const row = eventId === undefined ? undefined : await findEvent(ctx.db, ctx.shop.id, eventId);
  if (!row) throw ApiError.notFound();
  const attempts = await attemptsOf(ctx.db, row.id);
  return { view: toView(row, attempts), lastKopekSignature: attempts.at(-1)?.kopek_signature ?? null };
}

/**
 * Sends a notification again, whatever became of it: a new series of attempts (the whole retry
 * schedule), the first one due now. One on its way right now is left to finish.
 */
export async function resendNotification(ctx: Ctx, id: string): Promise<NotificationView> {
  const eventId = eventIdOf(id);
  if (eventId === undefined) throw ApiError.notFound();
  const shopNow = ctx.clock.now();
  // Leases are on real time; the context's clock is the shop's (a test shop's runs ahead).
  const realNow = new Date(shopNow.getTime() - (ctx.shop.test ? ctx.shop.clockOffsetMs : 0));
  const row = await ctx.db.tx((tx) => resendEvent(tx, ctx.shop.id, eventId, realNow, shopNow, LEASE_MS));
  if (!row) throw ApiError.notFound();
  return toView(row, await attemptsOf(ctx.db, row.id));
}
