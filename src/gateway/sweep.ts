import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Db } from '../db/db.js';
import { DUPLICATE_WINDOW_MS } from './charge.js';
import { sweepFingerprints } from './repository.js';

/**
 * Removes the duplicate check's fingerprints once their window has passed, every `everyMs`, so the
 * table holds a minute or so of charges. Each sweep reads the whole table, so sweeping very often
 * repeats that read; rarely, and each delete becomes a burst of writes that requests feel. Every instance may run it: a sweep deletes only rows
 * that decide nothing any more, so overlapping sweeps are harmless. Returns the function that stops it.
 */
export function startFingerprintSweep(
  deps: { db: Db; clock: Clock; log: FastifyBaseLogger },
  everyMs = 30_000,
): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    const before = new Date(deps.clock.now().getTime() - DUPLICATE_WINDOW_MS);
    sweepFingerprints(deps.db, before)
      .then((removed) => {
        if (removed > 0) deps.log.debug({ removed }, 'swept expired charge fingerprints');
      })
      .catch((err: unknown) => deps.log.warn({ err }, 'sweeping charge fingerprints failed; retrying later'))
      .finally(() => {
        running = false;
      });
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
