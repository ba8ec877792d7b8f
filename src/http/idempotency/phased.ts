import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KeyedRequest, KeyResource } from '../../context.js';
import { ApiError } from '../../core/errors.js';
import type { KeyLockRelease } from '../../db/db.js';
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

/**
 * The space of the phased mode's key locks (Db.lockKey). Not the atomic mode's: that one is a lock of
 * the request's own transaction, and the two never guard the same route at once.
 */
export const PHASED_LOCK_SPACE = 727_004;

interface PhasedRun {
  release: KeyLockRelease;
  key: string;
  print: string;
  createdAt: Date;
  keyed: KeyedRequest;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** A keyed request on a route in the phased mode, while it runs: its key lock and its recovery. */
    keyedRun: PhasedRun | undefined;
  }
}

// The key's row moves on with the verb's own step; created_at stays that of the first run.
const ADVANCE_SQL = `INSERT INTO idempotency_keys
    (shop_id, key, fingerprint, recovery_point, resource, created_at, updated_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7)
  ON CONFLICT (shop_id, key) DO UPDATE SET
    recovery_point = EXCLUDED.recovery_point, resource = EXCLUDED.resource, updated_at = EXCLUDED.updated_at`;

const FINISH_SQL = `INSERT INTO idempotency_keys
    (shop_id, key, fingerprint, status_code, response_headers, response_body, recovery_point,
     created_at, updated_at)
  VALUES ($1, $2, $3, $4, $5, $6, 'finished', $7, $8)
  ON CONFLICT (shop_id, key) DO UPDATE SET
    status_code = EXCLUDED.status_code, response_headers = EXCLUDED.response_headers,
    response_body = EXCLUDED.response_body, recovery_point = 'finished', updated_at = EXCLUDED.updated_at`;

/**
 * The phased mode (route `config: { idempotency: 'phased' }`), for routes whose work calls out of the
 * process (a remote gateway): no transaction is held across the request. Instead:
 *
 * - "still running" (409) is a key lock (Db.lockKey) taken here and released once the answer is
 *   stored. It holds no transaction, and a process that dies drops it with its connection, so a
 *   retry after a restart is never told 409 by a request that no longer runs;
 * - the verb commits its steps itself and moves the key's recovery point in the same batches
 *   (`ctx.keyed.advance`), so a retry after a crash sees where the first run stopped (`ctx.keyed.point`
 *   and `resource`) and resumes there rather than doing the work again;
 * - the answer is stored with the point 'finished' and replayed byte for byte.
 *
 * What is committed stays committed: a 5xx stores no answer, and the key keeps the point its last
 * committed step recorded (or has no row at all), for the retry to resume from.
 */
export async function startPhased(
  deps: KeyModeDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  key: string,
  print: string,
): Promise<FastifyReply | undefined> {
  const shopId = (request.shop as { id: number }).id;
  const release = await deps.db.lockKey(PHASED_LOCK_SPACE, `${shopId}:${key}`);
  if (!release) throw ApiError.base('conflict', IN_PROGRESS);
  try {
    let existing = await readKey(deps.db, shopId, key);
    if (existing && isExpired(existing, deps.clock)) {
      await deps.db.query('DELETE FROM idempotency_keys WHERE shop_id = $1 AND key = $2', [shopId, key]);
      existing = undefined;
    }
    if (existing) {
      refuseOtherRequest(existing, print);
      if (existing.status_code !== null) {
        await release();
        return replay(reply, existing);
      }
      if (
        existing.recovery_point === 'finished' &&
        !(request.routeOptions.config?.rebuildsFinished && existing.resource !== null)
      ) {
        // The work is done but its answer was never stored (a crash between the last step and the
        // store), or the row is an older version's mark of a running key. A route that can rebuild
        // the answer from `resource` does (POST /subscriptions); elsewhere the key answers 409 as
        // such rows always did, and the work is not run a second time.
        throw ApiError.base('conflict', IN_PROGRESS);
      }
    }
    const createdAt = existing?.created_at ?? deps.clock.now();
    request.keyedRun = {
      release,
      key,
      print,
      createdAt,
      keyed: keyedRequest(deps, shopId, key, print, createdAt, existing),
    };
    return undefined;
  } catch (err) {
    await release();
    throw err;
  }
}

function keyedRequest(
  deps: KeyModeDeps,
  shopId: number,
  key: string,
  print: string,
  createdAt: Date,
  existing: KeyRow | undefined,
): KeyedRequest {
  return {
    point: existing?.recovery_point ?? 'started',
    resource: existing?.resource ?? null,
    advance: (point, resource: KeyResource | null) => ({
      sql: ADVANCE_SQL,
      params: [
        shopId,
        key,
        print,
        point,
        resource === null ? null : JSON.stringify(resource),
        createdAt,
        deps.clock.now(),
      ],
    }),
  };
}

/** Stores the answer with the point 'finished' (unless it is a 5xx), then releases the key. */
export async function finishPhased(
  deps: KeyModeDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
): Promise<void> {
  const run = request.keyedRun;
  if (run === undefined) return;
  request.keyedRun = undefined;
  try {
    if (!request.shop || !keepsAnswer(request, reply.statusCode)) return;
    const answer = storedAnswer(reply, payload);
    // Should this fail, the client is told 500 and its retry resumes from the last recovery point.
    await deps.db.query(FINISH_SQL, [
      request.shop.id,
      run.key,
      run.print,
      answer.status,
      answer.headers,
      answer.body,
      run.createdAt,
      deps.clock.now(),
    ]);
  } finally {
    await run.release();
  }
}

/** The answer was sent without passing finishPhased: only the key lock is let go. */
export async function abandonPhased(request: FastifyRequest): Promise<void> {
  const run = request.keyedRun;
  if (run === undefined) return;
  request.keyedRun = undefined;
  await run.release();
}
