import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../core/errors.js';
import { type HeldTx, holdTransaction } from '../../db/held.js';
import {
  IN_PROGRESS,
  isExpired,
  type KeyModeDeps,
  type KeyRow,
  keepsAnswer,
  readKey,
  refuseOtherRequest,
  replay,
  storedAnswer,
} from './keys.js';

// Namespaces the keys' advisory locks away from other users of pg_try_advisory_xact_lock.
const KEY_LOCK_SPACE = 727_003;

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The transaction a request with an Idempotency-Key runs in (atomic mode): its effects and its
     * stored answer commit together, or neither does.
     */
    keyedTx: { key: string; print: string; held: HeldTx } | undefined;
  }
}

/**
 * The atomic mode, the default: a keyed request runs in one transaction that also stores its answer,
 * so the effect and the answer commit together or not at all; an answer of 5xx rolls the effect back,
 * and the request can simply be retried. "Still running" is an advisory lock of that transaction, not
 * a stored mark: it ends with the transaction, so a process that dies mid-request leaves nothing
 * behind and a retry either replays the committed answer or runs afresh.
 *
 * For routes that make no call out of the process: the transaction stays open for the whole request
 * (on the embedded store it blocks every other request meanwhile), so a route that waits on the
 * network uses the phased mode.
 */
export async function startAtomic(
  deps: KeyModeDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  key: string,
  print: string,
): Promise<FastifyReply | undefined> {
  const shopId = (request.shop as { id: number }).id;
  const held = await holdTransaction(deps.db);
  let existing: KeyRow | undefined;
  try {
    const [lock] = await held.tx.query<{ locked: boolean }>(
      'SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS locked',
      [KEY_LOCK_SPACE, `${shopId}:${key}`],
    );
    if (!lock?.locked) throw ApiError.base('conflict', IN_PROGRESS);
    existing = await readKey(held.tx, shopId, key);
    if (existing && isExpired(existing, deps.clock)) {
      await held.tx.query('DELETE FROM idempotency_keys WHERE shop_id = $1 AND key = $2', [shopId, key]);
      existing = undefined;
    }
  } catch (err) {
    await held.end(false);
    throw err;
  }
  if (!existing) {
    request.keyedTx = { key, print, held };
    return undefined;
  }
  await held.end(false);
  refuseOtherRequest(existing, print);
  // Left by a version of Kopek that marked running keys with a stored row, or by a phased request
  // that got no further than its recovery point: its work may be done, so the key is not run again
  // in a transaction that cannot resume it.
  if (existing.status_code === null) throw ApiError.base('conflict', IN_PROGRESS);
  return replay(reply, existing);
}

/** Stores the answer and commits the request's effect with it, or rolls both back after a 5xx. */
export async function finishAtomic(
  deps: KeyModeDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
): Promise<void> {
  const keyed = request.keyedTx;
  if (keyed === undefined || !request.shop) return;
  request.keyedTx = undefined;
  if (!keepsAnswer(request, reply.statusCode)) {
    await keyed.held.end(false);
    return;
  }
  const answer = storedAnswer(reply, payload);
  const shopId = request.shop.id;
  // A failed commit took the effect with it: the error answers 500, and a retry runs afresh.
  await keyed.held.end(true, async (tx) => {
    await tx.query(
      `INSERT INTO idempotency_keys
         (shop_id, key, fingerprint, status_code, response_headers, response_body, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [shopId, keyed.key, keyed.print, answer.status, answer.headers, answer.body, deps.clock.now()],
    );
  });
}

/**
 * The answer was sent without passing finishAtomic's commit (an error while sending, say): nothing was
 * stored, so nothing of the request is kept either.
 */
export async function abandonAtomic(request: FastifyRequest): Promise<void> {
  const keyed = request.keyedTx;
  if (keyed === undefined) return;
  request.keyedTx = undefined;
  await keyed.held.end(false).catch(() => {});
}
