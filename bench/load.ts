import autocannon from 'autocannon';
import { cpuMeter } from './processes.js';
import type { Scenario } from './scenarios.js';

export interface Figures {
  scenario: string;
  /** Requests per second asked for; null when every connection sends as fast as answers come back. */
  rate: number | null;
  /** A baseline run made for one Kopek scenario, right before it: that scenario's name. */
  pairedWith?: string;
  target: Scenario['target'];
  method: string;
  path: string;
  durationSec: number;
  requests: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Connection errors, timeouts included. */
  errors: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  /** CPU time the server process spent per answered request (null where /proc is not available). */
  serverCpuMsPerReq: number | null;
  /** CPU time this machine's PostgreSQL spent per answered request (null when it is elsewhere). */
  databaseCpuMsPerReq: number | null;
}

export interface LoadOptions {
  baseUrl: string;
  headers: Record<string, string>;
  connections: number;
  durationSec: number;
  /** The server's process id, for its CPU time. */
  serverPid?: number;
  /** Whether the database runs on this machine, so its CPU time can be read. */
  localDatabase: boolean;
}

/** Counts requests over the whole run, so values built from it stay unique across runs. */
let seq = 0;

/** The next request number, unique over the whole run (every load generator takes from it). */
export const nextSeq = () => ++seq;

/** Runs autocannon at full load (every connection sends as answers come back); stopped if `signal` fires. */
export async function drive(scenario: Scenario, opts: LoadOptions, signal: AbortSignal): Promise<Figures> {
  const build = scenario.body;
  const instance = autocannon({
    url: opts.baseUrl,
    connections: opts.connections,
    duration: opts.durationSec,
    timeout: 10,
    requests: [
      {
        method: scenario.method,
        path: scenario.path,
        headers: { ...opts.headers, ...(build ? { 'content-type': 'application/json' } : {}) },
        ...(build
          ? { setupRequest: (request) => ({ ...request, body: JSON.stringify(build({ seq: nextSeq() })) }) }
          : {}),
      },
    ],
  });
  const stop = () => instance.stop();
  signal.addEventListener('abort', stop, { once: true });
  const cpu = cpuMeter(opts.serverPid, opts.localDatabase);
  try {
    const r = await instance;
    const statusCodes: Record<string, number> = {};
    for (const [code, { count }] of Object.entries(r.statusCodeStats)) statusCodes[code] = count;
    const requests = Object.values(statusCodes).reduce((a, b) => a + b, 0);
    const cpuUsed = cpu(requests);
    return {
      scenario: scenario.name,
      rate: null,
      target: scenario.target,
      method: scenario.method,
      path: scenario.path,
      durationSec: r.duration,
      requests,
      reqPerSec: Math.round(r.requests.average),
      p50Ms: r.latency.p50,
      p99Ms: r.latency.p99,
      errors: r.errors,
      non2xx: r.non2xx,
      statusCodes,
      ...cpuUsed,
    };
  } finally {
    signal.removeEventListener('abort', stop);
  }
}
