/**
 * Memory given back once a process goes quiet. V8 shrinks a heap that traffic (or start-up) grew
 * only after one to two minutes without work (its memory reducer); until then an idle server holds
 * what start-up and its last burst left: 130–165 MB where under 100 MB are live, 30 MB of it the
 * young generation at its full size. So a serving process looks every second at what it did since
 * the last look: once it has answered no request and its event loop has stayed nearly idle
 * (background loops polling, no batch of work) for `quietMs` in a row, and it has grown by `growth`
 * bytes over its lowest since the last compaction, it compacts: one full collection per look, as
 * long as it stays quiet, until the young generation is back to its smallest (at most
 * `maxCollections`; work coming in puts the rest off to the next quiet spell). The freed pages go
 * back to the system a moment later.
 *
 * Several collections because V8 shrinks its young generation in a collection only once the
 * allocation rate it has sampled lately is low, which after a burst took about five seconds of
 * quiet collections in every probe (a server after 11,000 requests, quiet for 5 s before the
 * first: the fifth, 9 s after the last request, shrank it from 32 MB to 1 MB; RSS 178 → 147 MB).
 * So the first collection comes after 2 s of quiet, and a server is compact 7 to 8 s after its
 * last burst. After start-up the first one does (129 → 97 MB).
 *
 * The collection needs V8's `gc` function, which Node exposes under `--expose-gc` (one of the flags
 * every way of starting Kopek passes: package.json, bin/kopek.js, the Dockerfile). Run without it,
 * the process keeps V8's own timing and nothing else changes. A busy process is never interrupted,
 * and a server with steady light traffic never compacts: one request starts the quiet spell again.
 */
import { performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';

/** What the compactor sees of the process; injected in tests. */
export interface ProcessProbe {
  /** Resident set size now, in bytes. */
  rss(): number;
  /** The event loop's utilization (0–1) since the previous call (the first call: since start). */
  utilization(): number;
  /** How many requests the process has received so far (a counter that only grows). */
  requests(): number;
  /** Whether V8's young generation is at its smallest (nothing left to give back there). */
  youngAtSmallest(): boolean;
  /** A full collection, or undefined when V8's `gc` is not exposed. */
  collect: (() => void) | undefined;
}

export interface IdleCompactorOptions {
  /** How often to look, in ms (default 1,000). */
  everyMs?: number;
  /**
   * Event-loop utilization below which an interval between two looks counts as quiet (default 0.2):
   * a process polling its queues is far below, one renewing or delivering a batch far above. The
   * margin is for a machine whose cores are shared: a process waiting for a core counts as busy.
   */
  busyBelow?: number;
  /** How long the process must have been quiet before a compaction, in ms (default 2,000). */
  quietMs?: number;
  /** Growth of the RSS over its lowest since the last compaction that makes another worth it, in bytes (default 8 MB). */
  growth?: number;
  /** The most collections one compaction runs (default 30). */
  maxCollections?: number;
  /** Told when a compaction starts (a metric). */
  onCompaction?: () => void;
}

export interface IdleCompactor {
  /**
   * One look: starts a compaction when the process has been quiet long enough and grew, or goes on
   * with the one under way; runs at most one collection. Tells whether it ran one.
   */
  look(): boolean;
  /** Looks every `everyMs` from now on, without keeping the process alive; returns the stop. */
  start(): () => void;
}

/** V8's young generation (new space) is at its smallest when it holds at most this many bytes. */
const SMALLEST_YOUNG = 2 * 1024 * 1024;

/**
 * The running process, with V8's `gc` when Node was started with `--expose-gc`; `server` is the
 * HTTP server whose requests count as work.
 */
export function processProbe(server: { on(event: 'request', listener: () => void): unknown }): ProcessProbe {
  let last = performance.eventLoopUtilization();
  let requests = 0;
  server.on('request', () => {
    requests += 1;
  });
  const gc = (globalThis as { gc?: () => void }).gc;
  return {
    rss: () => process.memoryUsage.rss(),
    utilization() {
      const now = performance.eventLoopUtilization();
      const since = performance.eventLoopUtilization(now, last);
      last = now;
      return since.utilization;
    },
    requests: () => requests,
    youngAtSmallest: () =>
      getHeapSpaceStatistics().every((s) => s.space_name !== 'new_space' || s.space_size <= SMALLEST_YOUNG),
    collect: typeof gc === 'function' ? () => gc() : undefined,
  };
}

export function idleCompactor(probe: ProcessProbe, options: IdleCompactorOptions = {}): IdleCompactor {
  const everyMs = options.everyMs ?? 1_000;
  const busyBelow = options.busyBelow ?? 0.2;
  const quietMs = options.quietMs ?? 2_000;
  const growth = options.growth ?? 8 * 1024 * 1024;
  const maxCollections = options.maxCollections ?? 30;
  // The lowest RSS seen since the last compaction (none yet: the first quiet spell after start
  // compacts what start-up left). The lowest, because freed pages go back to the system only later.
  let floor = 0;
  let quietLooks = 0;
  let requestsSeen = 0;
  // Collections the compaction under way has left to run (0: none under way).
  let collectionsLeft = 0;
  const look = (): boolean => {
    const collect = probe.collect;
    if (!collect) return false;
    const rss = probe.rss();
    floor = Math.min(floor, rss);
    const requests = probe.requests();
    const quiet = probe.utilization() < busyBelow && requests === requestsSeen;
    requestsSeen = requests;
    quietLooks = quiet ? quietLooks + 1 : 0;
    if (collectionsLeft > 0) {
      // Work came in: the compaction is put off to the next quiet spell, whatever the growth.
      if (!quiet) {
        collectionsLeft = 0;
        if (!probe.youngAtSmallest()) floor = 0;
        return false;
      }
      // Nothing is left to give back: the compaction is over.
      if (probe.youngAtSmallest()) {
        collectionsLeft = 0;
        return false;
      }
      collectionsLeft -= 1;
      collect();
      return true;
    }
    if (quietLooks * everyMs < quietMs || rss < floor + growth) return false;
    options.onCompaction?.();
    collect();
    collectionsLeft = maxCollections - 1;
    floor = rss;
    return true;
  };
  return {
    look,
    start() {
      if (!probe.collect) return () => {};
      // The first look measures from here, not from process start.
      probe.utilization();
      requestsSeen = probe.requests();
      const timer = setInterval(look, everyMs);
      timer.unref();
      return () => clearInterval(timer);
    },
  };
}
