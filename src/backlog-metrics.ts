import { Gauge, type Registry } from 'prom-client';

export interface Backlog {
  /** How many wait. */
  count: number;
  /** How long the oldest has waited; 0 when none does. */
  oldestSeconds: number;
}

/**
 * Two gauges of one backlog (how many wait, and how long the oldest has: the lag), read from the
 * store once per scrape however many gauges ask.
 */
export function backlogGauges(
  registry: Registry,
  names: { count: [name: string, help: string]; oldest: [name: string, help: string] },
  read: () => Promise<Backlog>,
): void {
  let pending: Promise<Backlog> | undefined;
  const once = () => {
    pending ??= read().finally(() => {
      setTimeout(() => {
        pending = undefined;
      }, 1000).unref();
    });
    return pending;
  };
  new Gauge({
    name: names.count[0],
    help: names.count[1],
    registers: [registry],
    async collect() {
      this.set((await once()).count);
    },
  });
  new Gauge({
    name: names.oldest[0],
    help: names.oldest[1],
    registers: [registry],
    async collect() {
      this.set((await once()).oldestSeconds);
    },
  });
}
