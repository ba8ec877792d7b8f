import { type KeyObject, sign } from 'node:crypto';
import { Worker } from 'node:worker_threads';

/**
 * Content-Signature off the event loop: RSA-SHA256 with a shop's key costs about 0.22 ms, two thirds
 * of a delivery's CPU in the process, and on the event loop it kept one instance from using a second
 * core. Signing threads take the work; what is asked for during one turn of the loop goes to a
 * thread as one message, and comes back as one.
 *
 * A thread is given each key once (a KeyObject is cloned across threads) and keeps at most
 * KEYS_KEPT of them, dropping the oldest given, as it is told to. Whatever goes wrong with a thread
 * (it stopped, it could not sign), the signature is made here on the loop instead: a notification
 * is never held up or failed for it.
 */

/** The code of a signing thread: plain JavaScript, so it runs the same under tsx, vitest and dist. */
const THREAD = `
const { parentPort } = require('node:worker_threads');
const { sign } = require('node:crypto');
const keys = new Map();
parentPort.on('message', (m) => {
  for (const n of m.drop) keys.delete(n);
  for (const [n, key] of m.keys) keys.set(n, key);
  const out = [];
  for (const [id, n, body] of m.jobs) {
    const key = keys.get(n);
    let signature = null;
    if (key !== undefined) {
      try { signature = sign('sha256', Buffer.from(body), key).toString('base64'); } catch {}
    }
    out.push([id, signature]);
  }
  parentPort.postMessage(out);
});
`;

/** Keys a thread keeps at most; the process keeps as many opened (attempt.ts). */
const KEYS_KEPT = 1000;

/**
 * RSA-SHA256 (PKCS #1 v1.5) over `body`, in base64: the Content-Signature. The one definition of
 * it, for the signing threads' fallback and for the cabinet showing the headers a notification went with.
 */
export const signHere = (key: KeyObject | string, body: string): string =>
  sign('sha256', Buffer.from(body), key).toString('base64');

interface Job {
  id: number;
  key: KeyObject;
  body: string;
  resolve: (signature: string) => void;
  reject: (err: unknown) => void;
}

/** Ends the job with the thread's signature, or with one made here. */
function settle(job: Job, signature: string | null): void {
  try {
    job.resolve(signature ?? signHere(job.key, job.body));
  } catch (err) {
    job.reject(err);
  }
}

class SigningThread {
  readonly worker: Worker;
  /** Key numbers given to the thread, oldest first: the thread holds exactly these. */
  readonly #given = new Map<number, true>();
  readonly #waiting = new Map<number, Job>();
  #alive = true;
  #stopping = false;

  constructor(private readonly onGone: (thread: SigningThread) => void) {
    this.worker = new Worker(THREAD, { eval: true });
    this.worker.unref();
    this.worker.on('message', (out: [number, string | null][]) => {
      for (const [id, signature] of out) {
        const job = this.#waiting.get(id);
        if (!job) continue;
        this.#waiting.delete(id);
        settle(job, signature);
      }
      if (this.#waiting.size === 0) this.worker.unref();
    });
    const gone = () => this.#gone();
    this.worker.on('error', gone);
    this.worker.on('exit', gone);
  }

  get alive(): boolean {
    return this.#alive;
  }

  get load(): number {
    return this.#waiting.size;
  }

  send(jobs: Job[], numberOf: (key: KeyObject) => number): void {
    const keys: [number, KeyObject][] = [];
    const drop: number[] = [];
    const wire: [number, number, string][] = [];
    for (const job of jobs) {
      const n = numberOf(job.key);
      if (!this.#given.has(n)) {
        if (this.#given.size >= KEYS_KEPT) {
          const oldest = this.#given.keys().next().value as number;
          this.#given.delete(oldest);
          drop.push(oldest);
        }
        this.#given.set(n, true);
        keys.push([n, job.key]);
      }
      this.#waiting.set(job.id, job);
      wire.push([job.id, n, job.body]);
    }
    // Held while it has work: a delivery waiting for its signature keeps the process alive.
    this.worker.ref();
    try {
      this.worker.postMessage({ drop, keys, jobs: wire });
    } catch {
      this.#gone();
    }
  }

  #gone(): void {
    if (!this.#alive) return;
    this.#alive = false;
    const left = [...this.#waiting.values()];
    this.#waiting.clear();
    if (!this.#stopping) this.onGone(this);
    for (const job of left) settle(job, null);
  }

  /** Stops the thread; what it was still signing is signed here. */
  async stop(): Promise<void> {
    this.#stopping = true;
    await this.worker.terminate();
    this.#gone();
  }
}

export class Signer {
  readonly #threads: SigningThread[] = [];
  #queue: Job[] = [];
  #scheduled = false;
  #nextId = 1;
  #nextKey = 1;
  readonly #numbers = new WeakMap<KeyObject, number>();
  /** Threads started in all, replacements included: a thread that stops is replaced, up to a point. */
  #started = 0;

  /** `threads` signing threads; 0 signs on the event loop. */
  constructor(private readonly threads: number) {
    for (let i = 0; i < threads; i++) this.#startThread();
  }

  /** Resolves with the Content-Signature of `body`. */
  sign(key: KeyObject, body: string): Promise<string> {
    if (this.#threads.length === 0) return new Promise((resolve) => resolve(signHere(key, body)));
    return new Promise((resolve, reject) => {
      this.#queue.push({ id: this.#nextId++, key, body, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        // After this turn's I/O callbacks: the deliveries started together are signed together.
        setImmediate(() => this.#flush());
      }
    });
  }

  /** The running threads (a test stops one). */
  workers(): Worker[] {
    return this.#threads.map((t) => t.worker);
  }

  async close(): Promise<void> {
    const threads = this.#threads.splice(0);
    await Promise.all(threads.map((t) => t.stop()));
  }

  #startThread(): void {
    this.#started++;
    this.#threads.push(
      new SigningThread((gone) => {
        const i = this.#threads.indexOf(gone);
        if (i >= 0) this.#threads.splice(i, 1);
        // A thread that stopped is replaced, but not forever: past twice as many, the loop signs.
        if (this.#started < this.threads * 2) this.#startThread();
      }),
    );
  }

  #flush(): void {
    this.#scheduled = false;
    const jobs = this.#queue;
    this.#queue = [];
    const live = this.#threads.filter((t) => t.alive);
    if (live.length === 0) {
      for (const job of jobs) settle(job, null);
      return;
    }
    // Spread over the threads, the least loaded first.
    live.sort((a, b) => a.load - b.load);
    const share = Math.ceil(jobs.length / live.length);
    for (let i = 0; i < live.length && i * share < jobs.length; i++)
      live[i]?.send(jobs.slice(i * share, (i + 1) * share), (key) => this.#numberOf(key));
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
