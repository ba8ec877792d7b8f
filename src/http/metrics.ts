import type { FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/** Prometheus metrics at /metrics: request counts and durations by route, plus process metrics. */
export function registerMetrics(app: FastifyInstance): Registry {
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
  app.get('/metrics', { config: { public: true }, schema: { hide: true } }, async (_req, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
  return registry;
}
