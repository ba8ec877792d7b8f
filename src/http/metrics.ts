import { hash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import type { Config } from '../config.js';

/**
 * Prometheus metrics: request counts and durations by route, plus process metrics. They tell a
 * stranger how busy each route is and which errors it answers, so they are not open to the world:
 * on the main port /metrics asks for METRICS_TOKEN (and without one it is not served there at all);
 * METRICS_PORT serves it on a listener of its own, on 127.0.0.1 unless METRICS_HOST says otherwise.
 */
export function registerMetrics(app: FastifyInstance, config: Pick<Config, 'metricsToken'>): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const duration = new Histogram({
    name: 'kopek_http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const requests = new Counter({
    name: 'kopek_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  // The series of one method, route and status, looked up once: prom-client would otherwise hash
  // the labels of both metrics on every answer. Routes and statuses are few, so this stays small.
  const series = new Map<string, { count: () => void; time: (seconds: number) => void }>();
  app.addHook('onResponse', async (request, reply) => {
    const method = request.method;
    const route = request.is404 ? 'unmatched' : (request.routeOptions.url ?? 'unmatched');
    const status = reply.statusCode;
    const key = `${method} ${status} ${route}`;
    let s = series.get(key);
    if (!s) {
      const labels = { method, route, status: String(status) };
      const counter = requests.labels(labels);
      const histogram = duration.labels(labels);
      s = { count: () => counter.inc(), time: (seconds) => histogram.observe(seconds) };
      series.set(key, s);
    }
    s.count();
    s.time(reply.elapsedTime / 1000);
  });
  const token = config.metricsToken;
  if (token !== undefined) {
    app.get('/metrics', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
      const refused = refusal(request.headers.authorization, token);
      if (refused) return reply.code(401).header('www-authenticate', BEARER).send(refused);
      reply.type(registry.contentType);
      return registry.metrics();
    });
  }
  return registry;
}

const BEARER = 'Bearer realm="Kopek metrics"';

/** The contract's 401 body when the header does not carry the token; undefined when it does. */
function refusal(header: string | undefined, token: string) {
  const given = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
  // Compared as digests: same length whatever was sent, and in constant time.
  if (
    given !== undefined &&
    timingSafeEqual(hash('sha256', given, 'buffer'), hash('sha256', token, 'buffer'))
  )
    return undefined;
  const message =
    given === undefined
      ? 'Authentication required: send Authorization: Bearer with METRICS_TOKEN'
      : 'Invalid metrics token';
  return { message, errors: { base: [message] } };
}

export interface MetricsListener {
  port: number;
  close(): Promise<void>;
}

/**
 * The separate /metrics listener of METRICS_PORT (undefined when it is not set): GET /metrics only,
 * with METRICS_TOKEN when that is set too.
 */
export async function startMetricsListener(
  registry: Registry,
  config: Pick<Config, 'metricsPort' | 'metricsHost' | 'metricsToken'>,
  log: FastifyBaseLogger,
): Promise<MetricsListener | undefined> {
  if (config.metricsPort === undefined) return undefined;
  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
    res.end(JSON.stringify(body));
  };
  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      const message = `No route ${req.method} ${path}: this listener serves GET /metrics only`;
      return send(res, 404, { message, errors: { base: [message] } });
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const message = `Method ${req.method} is not allowed here`;
      return send(res, 405, { message, errors: { base: [message] } }, { allow: 'GET' });
    }
    const refused =
      config.metricsToken === undefined ? undefined : refusal(req.headers.authorization, config.metricsToken);
    if (refused) return send(res, 401, refused, { 'www-authenticate': BEARER });
    const text = await registry.metrics();
    res.writeHead(200, { 'content-type': registry.contentType });
    res.end(req.method === 'HEAD' ? undefined : text);
  };
  const server = createServer((req, res) => {
    answer(req, res).catch((err: unknown) => {
      log.error({ err }, 'could not collect metrics');
      if (!res.headersSent)
        send(res, 500, { message: 'Internal error', errors: { base: ['Internal error'] } });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.metricsPort, config.metricsHost, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  log.info({ host: config.metricsHost, port }, 'serving /metrics on its own listener');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
