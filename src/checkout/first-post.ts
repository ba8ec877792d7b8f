import { EventEmitter } from 'node:events';

/**
 * A second post of one checkout form (a double click, a reload) waits for the first to be answered,
 * then shows what it did. The first may be answered by another instance of Kopek (any number serve
 * one store), which tells this one nothing: so the store is read again every `stepMs`. A first post
 * answered in this process says so (answering), and the wait ends at once instead of at its next step.
 *
 * The wait is bounded by a timer, not by the clock: the injected clock is the shops' time, which a
 * test (or a test shop's simulated time) holds still, and a deadline on it might never come.
 */

export interface WaitLimits {
  /** How long between two reads of the store. */
  stepMs: number;
  /** How long the second post waits at most before showing the state as it is. */
  limitMs: number;
}

export const FIRST_POST_WAIT: WaitLimits = { stepMs: 150, limitMs: 15_000 };

/** Emits a checkout's token once a post of its form has been answered in this process. */
const answered = new EventEmitter();
// One listener per waiting post, any number of them.
answered.setMaxListeners(0);

/** Runs `pay` (a post of the form of `token`), then wakes the posts of that form waiting here. */
export async function answering<T>(token: string, pay: () => Promise<T>): Promise<T> {
  try {
    return await pay();
  } finally {
    answered.emit(token);
  }
}

/** Resolves once `settled` says the first post of `token` was answered, or after `limitMs` all the same. */
export async function waitForFirst(
  token: string,
  settled: () => Promise<boolean>,
  limits: WaitLimits = FIRST_POST_WAIT,
): Promise<void> {
  let gaveUp = false;
  let wake = () => {};
  const limit = setTimeout(() => {
    gaveUp = true;
    wake();
  }, limits.limitMs);
  try {
    while (!gaveUp) {
      const woken = new Promise<void>((resolve) => {
        wake = resolve;
      });
      // Listening before reading: an answer that comes while the store is read is not missed.
      answered.once(token, wake);
      const step = setTimeout(wake, limits.stepMs);
      try {
        if (await settled()) return;
        await woken;
      } finally {
        clearTimeout(step);
        answered.off(token, wake);
      }
    }
  } finally {
    clearTimeout(limit);
  }
}
