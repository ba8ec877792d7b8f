import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import type { Db } from '../db/db.js';
import { ApiError } from './errors.js';

/**
 * How long a key is kept. A key whose first request never finished (its process died) is kept as
 * long: that request may have charged a card, and only the shop can find out whether it did, so a
 * retry with the same key keeps answering 409 rather than doing the work a second time.
 */
const KEEP_MS = 24 * 60 * 60 * 1000;
const REPLAYED_HEADERS = ['content-type', 'location', 'link'];

interface KeyRow {
  fingerprint: string;
  status_code: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
  created_at: Date;
}

declare module 'fastify' {
  interface FastifyRequest {
    idempotencyKey: string | undefined;
  }
}

function fingerprint(request: FastifyRequest): string {
  const path = request.url.split('?')[0];
  return createHash('sha256')
    .update(`${request.method} ${path}\n${JSON.stringify(request.body ?? null)}`)
    .digest('hex');
}

async function claim(
  db: Db,
  shopId: number,
  key: string,
  print: string,
  now: Date,
): Promise<KeyRow | undefined> {
  const inserted = await db.query(
    `INSERT INTO idempotency_keys (shop_id, key, fingerprint, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (shop_id, key) DO NOTHING RETURNING key`,
    [shopId, key, print, now],
  );
  if (inserted.length > 0) return undefined;
  const [row] = await db.query<KeyRow>(
    'SELECT fingerprint, status_code, response_headers, response_body, created_at FROM idempotency_keys WHERE shop_id = $1 AND key = $2',
    [shopId, key],
  );
  return row;
}

/**
 * Idempotency-Key on every POST, once for all routes (decisions.md): the first response is stored
 * for 24 hours per shop and replayed for a retry with the same body; another body is 422; a retry
 * while the first request still runs is 409. A 5xx is not stored, so the request can be retried.
 */
export function registerIdempotency(app: FastifyInstance, db: Db, clock: Clock): void {
  app.decorateRequest('idempotencyKey', undefined);

  app.addHook('preHandler', async (request, reply) => {
    const header = request.headers['idempotency-key'];
    if (request.method !== 'POST' || header === undefined || !request.shop) return;
    const key = Array.isArray(header) ? header[0] : header;
    if (!key || key.length > 255) {
      throw ApiError.validation({ idempotency_key: ['must be 1 to 255 characters'] });
    }
    const shopId = request.shop.id;
    const print = fingerprint(request);
    for (let attempt = 0; attempt < 2; attempt++) {
      const now = clock.now();
      const existing = await claim(db, shopId, key, print, now);
      if (!existing) {
        request.idempotencyKey = key;
        return;
      }
      if (now.getTime() - existing.created_at.getTime() > KEEP_MS) {
        await db.query('DELETE FROM idempotency_keys WHERE shop_id = $1 AND key = $2 AND created_at = $3', [
          shopId,
          key,
          existing.created_at,
        ]);
        continue;
      }
      if (existing.fingerprint !== print) {
        throw ApiError.validation({
          idempotency_key: ['was already used with a different request; use a new key for a new request'],
        });
      }
      if (existing.status_code === null) {
        throw ApiError.base(
          'conflict',
          'A request with this Idempotency-Key is still being processed; retry later',
        );
      }
      return replay(reply, existing);
    }
    throw ApiError.base(
      'conflict',
      'A request with this Idempotency-Key is still being processed; retry later',
    );
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const key = request.idempotencyKey;
    if (key === undefined || !request.shop) return payload;
    request.idempotencyKey = undefined;
    if (reply.statusCode >= 500 || (payload !== null && typeof payload !== 'string')) {
      await db.query('DELETE FROM idempotency_keys WHERE shop_id = $1 AND key = $2', [request.shop.id, key]);
      return payload;
    }
    const headers: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const v = reply.getHeader(name);
      if (v !== undefined) headers[name] = String(v);
    }
    try {
      await db.query(
        `UPDATE idempotency_keys SET status_code = $3, response_headers = $4, response_body = $5
         WHERE shop_id = $1 AND key = $2`,
        [request.shop.id, key, reply.statusCode, JSON.stringify(headers), payload ?? ''],
      );
    } catch (err) {
      // The work is done: answering 500 now would make the client retry it. The key stays
      // "running", so a retry gets 409 instead of a second execution.
      request.log.error({ err, idempotency_key: key }, 'could not store the response for an Idempotency-Key');
    }
    return payload;
  });
}

function replay(reply: FastifyReply, row: KeyRow): FastifyReply {
  for (const [name, value] of Object.entries(row.response_headers ?? {})) reply.header(name, value);
  reply.header('idempotent-replayed', 'true');
  return reply.code(row.status_code as number).send(row.response_body ?? '');
}

/** Removes keys past their 24 hours; called from time to time, never on a request's path. */
export async function purgeIdempotencyKeys(db: Db, clock: Clock): Promise<void> {
  await db.query('DELETE FROM idempotency_keys WHERE created_at < $1', [
    new Date(clock.now().getTime() - KEEP_MS),
  ]);
}
