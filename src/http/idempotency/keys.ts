import { createHmac } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../clock.js';
import type { RecoveryPoint } from '../../context.js';
import { ApiError } from '../../core/errors.js';
import type { Db, Queryable } from '../../db/db.js';

/** What both modes share: the key's row, the request's fingerprint, the stored answer and its replay. */

/** How long a key is kept. */
export const KEEP_MS = 24 * 60 * 60 * 1000;
const REPLAYED_HEADERS = ['content-type', 'location', 'link'];
/**
 * The fingerprint of keys stored before fingerprints were keyed: it was dropped (an unkeyed hash of a
 * body with a card in it can be reversed), so such a key replays its answer for any body.
 */
export const UNVERIFIABLE_FINGERPRINT = 'unverifiable';

export const IN_PROGRESS = 'A request with this Idempotency-Key is still being processed; retry later';

/** What the modes work with: the store itself and the platform's clock (keys live 24 h of real time). */
export interface KeyModeDeps {
  db: Db;
  clock: Clock;
}

/** Which mode a route's keyed requests run in (route `config.idempotency`); atomic unless it says. */
export type IdempotencyMode = 'atomic' | 'phased';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * 'phased': keyed requests hold no transaction and record recovery points (phased.ts), for routes
     * that call out of the process. Default 'atomic' (atomic.ts).
     */
    idempotency?: IdempotencyMode;
    /**
     * In the phased mode: the verb answers a key whose work finished without a stored answer (a
     * crash between its last step and storing the answer) from the key's resource. Without it such a
     * key answers 409, and the work is not run a second time.
     */
    rebuildsFinished?: boolean;
    /**
     * A 504 of this route is an answer, not a failure: the acquirer's silence, with its pending
     * transaction written (the gateway's charge routes). A keyed request keeps it: its effect
     * commits and the 504 is stored under the key, so a resend is told the same instead of charging
     * again.
     */
    timeoutIsAnswer?: boolean;
  }
}

export interface KeyRow {
  fingerprint: string;
  status_code: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
  recovery_point: RecoveryPoint;
  resource: Record<string, string | number | boolean | null> | null;
  created_at: Date;
}

/** The request's key, or undefined when it has none (or is not a shop's POST). Refuses a bad one. */
export function keyOf(request: FastifyRequest): string | undefined {
  const header = request.headers['idempotency-key'];
  if (request.method !== 'POST' || header === undefined || !request.shop) return undefined;
  const key = Array.isArray(header) ? header[0] : header;
  if (!key || key.length > 255) {
    throw ApiError.validation({ idempotency_key: ['must be 1 to 255 characters'] });
  }
  return key;
}

/** Sorted keys, so two bodies that differ only in their members' order are the same request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * A keyed hash of the request: bodies carry card numbers and CVCs, and the stored answer shows
 * part of the card, so an unkeyed hash could be reversed by trying the missing digits.
 */
export function fingerprint(key: Buffer, request: FastifyRequest): string {
  const path = request.url.split('?')[0];
  return createHmac('sha256', key)
    .update(`${request.method} ${path}\n${canonicalJson(request.body ?? null)}`)
    .digest('base64url');
}

export async function readKey(db: Queryable, shopId: number, key: string): Promise<KeyRow | undefined> {
  const [row] = await db.query<KeyRow>(
    `SELECT fingerprint, status_code, response_headers, response_body, recovery_point, resource, created_at
     FROM idempotency_keys WHERE shop_id = $1 AND key = $2`,
    [shopId, key],
  );
  return row;
}

export const isExpired = (row: KeyRow, clock: Clock): boolean =>
  clock.now().getTime() - row.created_at.getTime() > KEEP_MS;

/** The 422 of a key used before with another request. */
export function refuseOtherRequest(row: KeyRow, print: string): void {
  if (row.fingerprint !== print && row.fingerprint !== UNVERIFIABLE_FINGERPRINT) {
    throw ApiError.validation({
      idempotency_key: ['was already used with a different request; use a new key for a new request'],
    });
  }
}

/**
 * Whether an answer is kept under its key. A server error is not (the request may simply be retried),
 * except a 504 that the route says is an answer (`timeoutIsAnswer`).
 */
export function keepsAnswer(request: FastifyRequest, status: number): boolean {
  if (status < 500) return true;
  return status === 504 && request.routeOptions.config?.timeoutIsAnswer === true;
}

/** The answer as it is stored: its status, the headers a replay repeats, and its body's exact text. */
export function storedAnswer(reply: FastifyReply, payload: unknown) {
  const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString() : '';
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const v = reply.getHeader(name);
    if (v !== undefined) headers[name] = String(v);
  }
  return { status: reply.statusCode, headers: JSON.stringify(headers), body };
}

export function replay(reply: FastifyReply, row: KeyRow): FastifyReply {
  for (const [name, value] of Object.entries(row.response_headers ?? {})) reply.header(name, value);
  reply.header('idempotent-replayed', 'true');
  return reply.code(row.status_code as number).send(row.response_body ?? '');
}
