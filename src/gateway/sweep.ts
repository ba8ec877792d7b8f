import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Db } from '../db/db.js';
import { every } from '../periodic.js';
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
  return every(everyMs, deps.log, 'swept expired charge fingerprints', () =>
    sweepFingerprints(deps.db, new Date(deps.clock.now().getTime() - DUPLICATE_WINDOW_MS)),
  );
}
