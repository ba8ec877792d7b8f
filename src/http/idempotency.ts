import { createHmac } from 'node:crypto';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import { ApiError } from '../core/errors.js';
import { keyringOf, type MasterKeys } from '../crypto/keyring.js';
import type { Db, Tx } from '../db/db.js';
import { type HeldTx, holdTransaction } from '../db/held.js';
import { every } from '../periodic.js';

/** How long a key is kept. */
const KEEP_MS = 24 * 60 * 60 * 1000;
const REPLAYED_HEADERS = ['content-type', 'location', 'link'];
// Namespaces the keys' advisory locks away from other users of pg_try_advisory_xact_lock.
const KEY_LOCK_SPACE = 727_003;
/**
 * The fingerprint of keys stored before fingerprints were keyed: it was dropped (an unkeyed hash of a
 * body with a card in it can be reversed), so such a key replays its answer for any body.
 */
export const UNVERIFIABLE_FINGERPRINT = 'unverifiable';

const IN_PROGRESS = 'A request with this Idempotency-Key is still being processed; retry later';

interface KeyRow {
  fingerprint: string;
  status_code: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
  created_at: Date;
}

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The transaction a request with an Idempotency-Key runs in: its effects and its stored answer
     * commit together, or neither does.
     */
    keyedTx: { key: string; print: string; held: HeldTx } | undefined;
  }
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
function fingerprint(key: Buffer, request: FastifyRequest): string {
  const path = request.url.split('?')[0];
  return createHmac('sha256', key)
    .update(`${request.method} ${path}\n${canonicalJson(request.body ?? null)}`)
    .digest('base64url');
}

async function readKey(tx: Tx, shopId: number, key: string): Promise<KeyRow | undefined> {
  const [row] = await tx.query<KeyRow>(
    `SELECT fingerprint, status_code, response_headers, response_body, created_at
     FROM idempotency_keys WHERE shop_id = $1 AND key = $2`,
    [shopId, key],
  );
  return row;
}

/**
 * Idempotency-Key on every POST, once for all routes (decisions.md): the first answer is stored for
 * 24 hours per shop and replayed for a retry with the same body; another body is 422; a retry while
 * the first request still runs is 409.
 *
 * A keyed request runs in one transaction that also stores its answer, so the effect and the answer
 * commit together or not at all; an answer of 5xx rolls the effect back, and the request can simply be
 * retried. "Still running" is an advisory lock of that transaction, not a stored mark: it ends with the
 * transaction, so a process that dies mid-request leaves nothing behind and a retry either replays the
 * committed answer or runs afresh.
 */
export function registerIdempotency(app: FastifyInstance, db: Db, clock: Clock, masterKey: MasterKeys): void {
  app.decorateRequest('keyedTx', undefined);
  // A lookup key: it stays the same when the master key rotates, so stored fingerprints still match.
  const printKey = keyringOf(masterKey).lookupKey('idempotency-fingerprint');

  // Before the body schema is checked: a refused body is an answer stored for the key too, and the
  // fingerprint is of the body as sent (before numeric strings are read as numbers).
  app.addHook('preValidation', async (request, reply) => {
    const header = request.headers['idempotency-key'];
    if (request.method !== 'POST' || header === undefined || !request.shop) return;
    const key = Array.isArray(header) ? header[0] : header;
    if (!key || key.length > 255) {
      throw ApiError.validation({ idempotency_key: ['must be 1 to 255 characters'] });
    }
    const shopId = request.shop.id;
    const print = fingerprint(printKey, request);
    const held = await holdTransaction(db);
    let existing: KeyRow | undefined;
    try {
      const [lock] = await held.tx.query<{ locked: boolean }>(
        'SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS locked',
        [KEY_LOCK_SPACE, `${shopId}:${key}`],
      );
      if (!lock?.locked) throw ApiError.base('conflict', IN_PROGRESS);
      existing = await readKey(held.tx, shopId, key);
      if (existing && clock.now().getTime() - existing.created_at.getTime() > KEEP_MS) {
        await held.tx.query('DELETE FROM idempotency_keys WHERE shop_id = $1 AND key = $2', [shopId, key]);
        existing = undefined;
      }
    } catch (err) {
      await held.end(false);
      throw err;
    }
    if (!existing) {
      request.keyedTx = { key, print, held };
      return;
    }
    await held.end(false);
    if (existing.fingerprint !== print && existing.fingerprint !== UNVERIFIABLE_FINGERPRINT) {
      throw ApiError.validation({
        idempotency_key: ['was already used with a different request; use a new key for a new request'],
      });
    }
    // Left by a version of Kopek that marked running keys with a stored row: its request may have
    // done its work, so the key is not run again before it expires.
    if (existing.status_code === null) throw ApiError.base('conflict', IN_PROGRESS);
    return replay(reply, existing);
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const keyed = request.keyedTx;
    if (keyed === undefined || !request.shop) return payload;
    request.keyedTx = undefined;
    if (reply.statusCode >= 500) {
      await keyed.held.end(false);
      return payload;
    }
    const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString() : '';
    const headers: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const v = reply.getHeader(name);
      if (v !== undefined) headers[name] = String(v);
    }
    const shopId = request.shop.id;
    // A failed commit took the effect with it: the error answers 500, and a retry runs afresh.
    await keyed.held.end(true, async (tx) => {
      await tx.query(
        `INSERT INTO idempotency_keys
           (shop_id, key, fingerprint, status_code, response_headers, response_body, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [shopId, keyed.key, keyed.print, reply.statusCode, JSON.stringify(headers), body, clock.now()],
      );
    });
    return payload;
  });

  // The answer was sent without passing onSend's commit (an error while sending, say): nothing was
  // stored, so nothing of the request is kept either.
  app.addHook('onResponse', async (request) => {
    const keyed = request.keyedTx;
    if (keyed === undefined) return;
    request.keyedTx = undefined;
    await keyed.held.end(false).catch(() => {});
  });
}

function replay(reply: FastifyReply, row: KeyRow): FastifyReply {
  for (const [name, value] of Object.entries(row.response_headers ?? {})) reply.header(name, value);
  reply.header('idempotent-replayed', 'true');
  return reply.code(row.status_code as number).send(row.response_body ?? '');
}

/** Removes keys past their 24 hours; called from time to time, never on a request's path. */
export async function purgeIdempotencyKeys(db: Db, clock: Clock): Promise<number> {
  const rows = await db.query<{ n: number }>(
    `WITH gone AS (DELETE FROM idempotency_keys WHERE created_at < $1 RETURNING 1)
     SELECT count(*)::int AS n FROM gone`,
    [new Date(clock.now().getTime() - KEEP_MS)],
  );
  return rows[0]?.n ?? 0;
}

/** Purges expired keys every `everyMs` in a serving process; returns the function that stops it. */
export function startIdempotencyPurge(
  deps: { db: Db; clock: Clock; log: FastifyBaseLogger },
  everyMs = 10 * 60_000,
): () => void {
  return every(everyMs, deps.log, 'purged expired idempotency keys', () =>
    purgeIdempotencyKeys(deps.db, deps.clock),
  );
}
