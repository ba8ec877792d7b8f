import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { type Figures, type LoadOptions, nextSeq } from './load.js';
import { cpuMeter } from './processes.js';
import type { Scenario } from './scenarios.js';

/**
 * Latency at a steady rate, measured open-loop: request i is due at start + i/rate and is sent then
 * whatever earlier requests are doing (over up to `connections` keep-alive connections), and its
 * latency counts from when it was due, so a slow answer that holds later requests back shows in theirs
 * too (no coordinated omission). autocannon's own rate mode is not used for this: it sends each
 * connection's share of a second in a burst at the start of the second, and its correction for
 * coordinated omission then adds made-up samples, so its p99 at a rate measures its bursts.
 */
export async function drivePaced(
  scenario: Scenario,
  opts: LoadOptions & { rate: number },
  signal: AbortSignal,
): Promise<Figures> {
  const pool = new Pool(opts.baseUrl, {
    connections: opts.connections,
    pipelining: 1,
    keepAliveTimeout: 30_000,
  });
  const headers = { ...opts.headers, ...(scenario.body ? { 'content-type': 'application/json' } : {}) };
  const total = Math.max(1, Math.round(opts.rate * opts.durationSec));
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  let errors = 0;
  const inFlight = new Set<Promise<void>>();

  const send = (dueAt: number) => {
    const body = scenario.body ? JSON.stringify(scenario.body({ seq: nextSeq() })) : undefined;
    const p = pool
      .request({ method: scenario.method, path: scenario.path, headers, ...(body ? { body } : {}), signal })
      .then(async (res) => {
        await res.body.dump();
        const code = String(res.statusCode);
        statusCodes[code] = (statusCodes[code] ?? 0) + 1;
        if (res.statusCode >= 200 && res.statusCode < 300) latencies.push(performance.now() - dueAt);
      })
      .catch(() => {
        errors++;
      })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  };

  const cpu = cpuMeter(opts.serverPid, opts.localDatabase);
  const start = performance.now();
  const interval = 1000 / opts.rate;
  let sent = 0;
  try {
    while (sent < total && !signal.aborted) {
      const now = performance.now();
      // Everything due by now goes out now; then sleep until the next one is due.
      while (sent < total && start + sent * interval <= now) {
        send(start + sent * interval);
        sent++;
      }
      const wait = start + sent * interval - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, Math.max(0, wait - 0.5)));
    }
    await Promise.all(inFlight);
  } finally {
    await pool.close().catch(() => {});
  }
  const durationSec = (performance.now() - start) / 1000;
  const requests = Object.values(statusCodes).reduce((a, b) => a + b, 0);
  const cpuUsed = cpu(requests);
  latencies.sort((a, b) => a - b);
  const pct = (p: number) =>
    latencies.length === 0
      ? 0
      : Math.round(
          (latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)] ?? 0) * 10,
        ) / 10;
  const ok = latencies.length;
  return {
    scenario: scenario.name,
    rate: opts.rate,
    target: scenario.target,
    method: scenario.method,
    path: scenario.path,
    durationSec: Math.round(durationSec * 100) / 100,
    requests,
    reqPerSec: Math.round(requests / durationSec),
    p50Ms: pct(50),
    p99Ms: pct(99),
    errors,
    non2xx: requests - ok,
    statusCodes,
    ...cpuUsed,
  };
}
