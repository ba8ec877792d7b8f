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
