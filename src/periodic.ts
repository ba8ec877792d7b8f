import type { FastifyBaseLogger } from 'fastify';

/**
 * Runs `work` every `everyMs` in a serving process, never two runs at once; a failed run is logged
 * and the next one tries again. Returns the function that stops it. The timer keeps no process alive.
 */
export function every(
  everyMs: number,
  log: FastifyBaseLogger,
  what: string,
  work: () => Promise<number>,
): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    work()
      .then((count) => {
        if (count > 0) log.debug({ count }, what);
      })
      .catch((err: unknown) => log.warn({ err }, `${what} failed; retrying later`))
      .finally(() => {
        running = false;
      });
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Runs `run` at once, then again `everyMs` after each run has ended: runs never overlap within a
 * process. A failed run is logged and the next one tries again. Returns a stop function that resolves
 * once a run in progress has finished.
 */
export function loop(
  everyMs: number,
  log: FastifyBaseLogger,
  what: string,
  run: () => Promise<void>,
): () => Promise<void> {
  let stopped = false;
  let current: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    current = run()
      .catch((err: unknown) => log.error({ err }, `${what} failed; trying again shortly`))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, everyMs);
      });
  };
  timer = setTimeout(tick, 0);
  return async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    await current;
  };
}
