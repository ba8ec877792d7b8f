/**
 * A signing thread (signer.ts runs these in a piscina pool). Plain JavaScript, so it runs the same
 * under tsx, vitest and the built dist, where the build copies it beside signer.js.
 *
 * Each task is a batch: the keys given with it (by number) and the bodies to sign, each with its
 * key's number. The answer, in the batch's order, is the signature in base64; null when the key
 * could not sign (the caller signs on its event loop and gets node's error); false when this thread
 * does not hold that key, and the caller sends the batch's rest again with their keys.
 */
import { sign } from 'node:crypto';
import { workerData } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';

/** The keys this thread holds, the least recently used dropped past the bound signer.ts sets. */
const keys = new LRUCache({ max: workerData.keysKept });

export default function signBatch(task) {
  for (const [n, key] of task.keys) keys.set(n, key);
  return task.jobs.map(([n, body]) => {
    const key = keys.get(n);
    if (key === undefined) return false;
    try {
      return sign('sha256', Buffer.from(body), key).toString('base64');
    } catch {
      return null;
    }
  });
}
