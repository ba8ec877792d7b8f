import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Clock } from '../clock.js';
import { keyringOf, type MasterKeys } from '../crypto/keyring.js';
import type { Db } from '../db/db.js';
import { every } from '../periodic.js';
import { abandonAtomic, finishAtomic, startAtomic } from './idempotency/atomic.js';
import { fingerprint, KEEP_MS, keyOf } from './idempotency/keys.js';
import { abandonPhased, finishPhased, startPhased } from './idempotency/phased.js';

export type { IdempotencyMode } from './idempotency/keys.js';
export { UNVERIFIABLE_FINGERPRINT } from './idempotency/keys.js';

/**
 * Idempotency-Key on every POST, once for all routes (decisions.md): the first answer is stored for
 * 24 hours per shop and replayed for a retry with the same body; another body is 422; a retry while
 * the first request still runs is 409.
 *
 * Two modes, chosen per route (`config.idempotency`): the atomic mode (idempotency/atomic.ts, the
 * default) runs the request in one transaction with its stored answer; the phased mode
 * (idempotency/phased.ts) holds no transaction and lets the request record recovery points, for
 * routes that call out of the process.
 */
export function registerIdempotency(app: FastifyInstance, db: Db, clock: Clock, masterKey: MasterKeys): void {
  app.decorateRequest('keyedTx', undefined);
  app.decorateRequest('keyedRun', undefined);
  // A lookup key: it stays the same when the master key rotates, so stored fingerprints still match.
  const printKey = keyringOf(masterKey).lookupKey('idempotency-fingerprint');
  const deps = { db, clock };

  // Before the body schema is checked: a refused body is an answer stored for the key too, and the
  // fingerprint is of the body as sent (before numeric strings are read as numbers).
  app.addHook('preValidation', async (request, reply) => {
    const key = keyOf(request);
    if (key === undefined) return;
    const print = fingerprint(printKey, request);
    if (request.routeOptions.config?.idempotency === 'phased')
      return startPhased(deps, request, reply, key, print);
    return startAtomic(deps, request, reply, key, print);
  });

  app.addHook('onSend', async (request, reply, payload) => {
    await finishAtomic(deps, request, reply, payload);
    await finishPhased(deps, request, reply, payload);
    return payload;
  });

  // The answer was sent without passing onSend (an error while sending, say).
  app.addHook('onResponse', async (request) => {
    await abandonAtomic(request);
    await abandonPhased(request);
  });
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
