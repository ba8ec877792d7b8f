import { type KeyObject, sign } from 'node:crypto';
import type { Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { CODE_ROOT } from '../code-root.js';

/**
 * Content-Signature off the event loop: RSA-SHA256 with a shop's key costs about 0.22 ms, two thirds
 * of a delivery's CPU in the process, and on the event loop it kept one instance from using a second
 * core. A piscina pool of signing threads (signing-thread.mjs) takes the work; what is asked for
 * during one turn of the loop goes to the threads as one batch each, and comes back as one.
 *
 * A key is sent to a thread once: with the first batch that uses it, and again only to a thread
 * that answers it does not hold it (a KeyObject is cloned across threads). A thread keeps at most
 * KEYS_KEPT of them, the least recently used dropped. A thread that dies is replaced by the pool, up
 * to a point. Whatever goes wrong with a thread (it stopped, it could not sign, the pool is gone),
 * the signature is made here on the loop instead: a notification is never held up or failed for it.
 */

/** src/notifications under tsx and vitest, dist/notifications when built (copied there as it is). */
const THREAD_FILE = new URL('notifications/signing-thread.mjs', CODE_ROOT).href;

/** Keys a thread keeps at most; the process keeps as many opened (attempt.ts). */
const KEYS_KEPT = 1000;

/** Batches a thread is handed ahead of the one it signs, so that it never waits for the loop. */
const BATCHES_AHEAD = 4;

/**
 * RSA-SHA256 (PKCS #1 v1.5) over `body`, in base64: the Content-Signature. The one definition of
 * it, for the signing threads' fallback and for the cabinet showing the headers a notification went with.
 */
export const signHere = (key: KeyObject | string, body: string): string =>
  sign('sha256', Buffer.from(body), key).toString('base64');

interface Job {
  key: KeyObject;
  body: string;
  resolve: (signature: string) => void;
  reject: (err: unknown) => void;
}

/** What signing-thread.mjs is given, and what it answers for each body (see there). */
interface Batch {
  keys: [number, KeyObject][];
  jobs: [number, string][];
}
type Answer = string | null | false;

export class Signer {
  #pool: Piscina<Batch, Answer[]> | undefined;
  #queue: Job[] = [];
  #scheduled = false;
  #nextKey = 1;
  readonly #numbers = new WeakMap<KeyObject, number>();
  /** Keys sent to some thread already: others get them only when they ask. */
  readonly #sent = new WeakSet<KeyObject>();
  /** Threads that died: past as many as were started, the loop signs (no endless restarts). */
  #deaths = 0;
  /** Signatures the event loop made in place of a thread (a test reads it). */
  signedHere = 0;

  /** `threads` signing threads; 0 signs on the event loop. `keysKept`: keys a thread holds at most. */
  constructor(
    private readonly threads: number,
    keysKept = KEYS_KEPT,
  ) {
    if (threads <= 0) return;
    const pool = new Piscina<Batch, Answer[]>({
      filename: THREAD_FILE,
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: Number.POSITIVE_INFINITY,
      concurrentTasksPerWorker: BATCHES_AHEAD,
      recordTiming: false,
      workerData: { keysKept },
    });
    // A thread that failed while it had nothing to sign: the pool replaces it, nothing is lost.
    pool.on('error', () => {});
    pool.on('workerDestroy', () => {
      if (this.#pool === pool && ++this.#deaths > threads) {
        this.#pool = undefined;
        void pool.destroy();
      }
    });
    this.#pool = pool;
  }

  /** Resolves with the Content-Signature of `body`. */
  sign(key: KeyObject, body: string): Promise<string> {
    if (this.#pool === undefined) {
      if (this.threads > 0) this.signedHere++;
      return new Promise((resolve) => resolve(signHere(key, body)));
    }
    return new Promise((resolve, reject) => {
      this.#queue.push({ key, body, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        // After this turn's I/O callbacks: the deliveries started together are signed together.
        setImmediate(() => this.#flush());
      }
    });
  }

  /** The running threads (a test stops one). */
  workers(): Worker[] {
    return this.#pool?.threads ?? [];
  }

  /** Stops the threads; what they were still signing is signed here. */
  async close(): Promise<void> {
    const pool = this.#pool;
    this.#pool = undefined;
    await pool?.destroy();
  }

  #flush(): void {
    this.#scheduled = false;
    const jobs = this.#queue;
    this.#queue = [];
    // A batch for each thread, so that all of them take a share.
    const share = Math.ceil(jobs.length / this.threads);
    for (let i = 0; i < jobs.length; i += share) this.#send(jobs.slice(i, i + share), false);
  }

  /** Sends `jobs` as one batch; `withKeys` gives every key along (to a thread that asked for them). */
  #send(jobs: Job[], withKeys: boolean): void {
    const pool = this.#pool;
    if (pool === undefined) {
      for (const job of jobs) this.#settle(job, null);
      return;
    }
    const keys = new Map<number, KeyObject>();
    const batch: Batch = { keys: [], jobs: [] };
    for (const job of jobs) {
      const n = this.#numberOf(job.key);
      if (withKeys || !this.#sent.has(job.key)) {
        keys.set(n, job.key);
        this.#sent.add(job.key);
      }
      batch.jobs.push([n, job.body]);
    }
    batch.keys = [...keys];
    pool.run(batch).then(
      (answers) => {
        const asked: Job[] = [];
        jobs.forEach((job, i) => {
          const answer = answers[i];
          if (answer === false && !withKeys) asked.push(job);
          else this.#settle(job, typeof answer === 'string' ? answer : null);
        });
        if (asked.length > 0) this.#send(asked, true);
      },
      () => {
        for (const job of jobs) this.#settle(job, null);
      },
    );
  }

  /** Ends the job with the thread's signature, or with one made here. */
  #settle(job: Job, signature: string | null): void {
    try {
      if (signature === null) this.signedHere++;
      job.resolve(signature ?? signHere(job.key, job.body));
    } catch (err) {
      job.reject(err);
    }
  }

  #numberOf(key: KeyObject): number {
    let n = this.#numbers.get(key);
    if (n === undefined) {
      n = this.#nextKey++;
      this.#numbers.set(key, n);
    }
    return n;
  }
}

let shared: Signer | undefined;

/** The process's signer, started with the first caller's number of threads. */
export function processSigner(threads: number): Signer {
  shared ??= new Signer(threads);
  return shared;
}

/** Stops the process's signing threads (at shutdown); a later delivery starts them again. */
export async function closeSigner(): Promise<void> {
  const s = shared;
  shared = undefined;
  await s?.close();
}
