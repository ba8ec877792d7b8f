/**
 * Memory given back once a process goes quiet. V8 shrinks a heap that traffic (or start-up) grew
 * only after one to two minutes without work (its memory reducer); until then an idle server holds
 * what start-up and its last burst left as garbage: 130–165 MB where under 100 MB are live. So a
 * serving process looks every second at what it did since the last look: once it has answered no
 * request and its event loop has stayed nearly idle (background loops polling, no batch of work)
 * for `quietMs` in a row, and it has grown by `growth` bytes over its lowest since the last
 * compaction, it asks V8 for full collections, which return the freed pages to the system.
 *
 * The collection needs V8's `gc` function, which Node exposes under `--expose-gc` (one of the flags
 * every way of starting Kopek passes: package.json, bin/kopek.js, the Dockerfile). Run without it,
 * the process keeps V8's own timing and nothing else changes.
 *
 * A busy process is never interrupted, and a server with steady light traffic never compacts: one
 * request starts the quiet spell again. The quiet spell is also what lets a collection give memory
 * back at all: V8 shrinks its young generation only when the allocation rate it sampled lately is
 * low; a collection 2 s after start-up left RSS where it was, one 5 s after took it from 129 to
 * 97 MB (the pages go back to the system a second or two after the collection).
 */
import { performance } from 'node:perf_hooks';

/** What the compactor sees of the process; injected in tests. */
export interface ProcessProbe {
  /** Resident set size now, in bytes. */
  rss(): number;
  /** The event loop's utilization (0–1) since the previous call (the first call: since start). */
  utilization(): number;
  /** How many requests the process has received so far (a counter that only grows). */
  requests(): number;
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
  /** How long the process must have been quiet before a compaction, in ms (default 5,000). */
  quietMs?: number;
  /** Growth of the RSS over its lowest since the last compaction that makes another worth it, in bytes (default 8 MB). */
  growth?: number;
  /** Told after each compaction (a metric). */
  onCompaction?: () => void;
}

export interface IdleCompactor {
  /**
   * One look: starts a compaction when the process has been quiet long enough and grew (tells
   * whether it did), or runs the compaction's second collection if the process is still quiet.
   */
  look(): boolean;
  /** Looks every `everyMs` from now on, without keeping the process alive; returns the stop. */
  start(): () => void;
}

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
    // One full collection. A compaction runs two, a second apart: V8 shrinks its young generation
    // only when the allocation rate it sampled at the previous collection was low, and after a
    // burst of work only the second collection sees the quiet (a server 6 s after 15,000 requests:
    // 163 MB; 130 MB after one collection, 108 MB after the second; two back to back: 139 MB).
    collect: typeof gc === 'function' ? () => gc() : undefined,
  };
}

export function idleCompactor(probe: ProcessProbe, options: IdleCompactorOptions = {}): IdleCompactor {
  const everyMs = options.everyMs ?? 1_000;
  const busyBelow = options.busyBelow ?? 0.2;
  const quietMs = options.quietMs ?? 5_000;
  const growth = options.growth ?? 8 * 1024 * 1024;
  // The lowest RSS seen since the last compaction (none yet: the first quiet spell after start
  // compacts what start-up left). The lowest, because the pages a collection frees go back to the
  // system only after it.
  let floor = 0;
  let quietLooks = 0;
  let requestsSeen = 0;
  // A compaction is two collections, a look apart (see processProbe's collect).
  let secondDue = false;
  const look = (): boolean => {
    const collect = probe.collect;
    if (!collect) return false;
    const rss = probe.rss();
    floor = Math.min(floor, rss);
    const requests = probe.requests();
    const quiet = probe.utilization() < busyBelow && requests === requestsSeen;
    requestsSeen = requests;
    if (secondDue) {
      secondDue = false;
      if (quiet) collect();
      return false;
    }
    quietLooks = quiet ? quietLooks + 1 : 0;
    if (quietLooks * everyMs < quietMs || rss < floor + growth) return false;
    collect();
    secondDue = true;
    quietLooks = 0;
    floor = rss;
    options.onCompaction?.();
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
