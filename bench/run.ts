/**
 * `npm run bench [-- scenario ...]`: starts Kopek and a bare Fastify baseline, both compiled and with
 * the flags of `npm start`, against a throw-away PostgreSQL schema, drives each scenario with
 * autocannon at full load and, for latency goals, at a steady rate with an open-loop generator
 * (paced.ts), and prints req/s and latency.
 * Settings: BENCH_DATABASE_URL (else DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test),
 * BENCH_DURATION (seconds per run, default 10), BENCH_WARMUP (default 2), BENCH_CONNECTIONS
 * (default 50), BENCH_RATE (req/s of the latency run of scenarios with a p99 goal, default 200;
 * 0 skips it), BENCH_SHOP (live, default, or test: the kind of shop the requests are made as),
 * BENCH_VERBOSE=1 to echo the servers' output, BENCH_PROFILE=1 to write the servers'
 * CPU profiles to bench/results/profiles/<server>/.
 * `npm run bench -- renewals` measures the billing engine instead: see bench/renewals.ts; and
 * `npm run bench -- webhooks` the delivery of notifications: see bench/webhooks.ts; and
 * `npm run bench -- memory` the memory of Kopek's processes: see bench/memory.ts.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { drive, type Figures, type LoadOptions } from './load.js';
import { runMemory } from './memory.js';
import { drivePaced } from './paced.js';
import {
  type Child,
  describeFailure,
  freePort,
  ROOT,
  runToEnd,
  startCompiled,
  startFlags,
  startKopek,
  stopChild,
  waitForHealth,
} from './processes.js';
import { runRenewals } from './renewals.js';
import { brokenRuns, buildReport, formatGoals, formatTable, labelOf } from './report.js';
import { type Scenario, selectScenarios } from './scenarios.js';
import { runWebhooks } from './webhooks.js';

const SHOP_ID = 1;
const DEFAULT_DB = 'postgres://postgres@127.0.0.1:5432/test';

function intSetting(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min)
    throw new Error(`${name} must be a whole number ≥ ${min}, got "${raw}"`);
  return n;
}

function withSearchPath(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

async function sql(url: string, text: string): Promise<void> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: 5000,
    statement_timeout: 30_000,
  });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** With BENCH_PROFILE=1 each server writes a V8 CPU profile (open it in Chrome DevTools) when it stops. */
function profileArgs(name: string): string[] {
  if (!process.env.BENCH_PROFILE) return [];
  // No file name: the module loader's thread writes a profile of its own, named by thread id.
  return ['--cpu-prof', `--cpu-prof-dir=${join(ROOT, 'bench', 'results', 'profiles', name)}`];
}

/** A Kopek route that answers 404 without credentials does not exist yet (others answer 401). */
async function routeExists(baseUrl: string, s: Scenario): Promise<boolean> {
  const res = await fetch(`${baseUrl}${s.path}`, { method: s.method, signal: AbortSignal.timeout(5000) });
  await res.arrayBuffer();
  return res.status !== 404;
}

/**
 * The kind of shop the requests are made as (BENCH_SHOP, default live). A live shop is what
 * production traffic is; a test shop (the sandbox) also reads its test clock's offset on every
 * request, one more round trip to PostgreSQL (shops/service.ts: ShopAuthenticator).
 */
type ShopKind = 'live' | 'test';

function shopKind(): ShopKind {
  const raw = process.env.BENCH_SHOP || 'live';
  if (raw !== 'live' && raw !== 'test') throw new Error(`BENCH_SHOP must be live or test, not ${raw}`);
  return raw;
}

interface Servers {
  kopek: { url: string; child: Child };
  baseline?: { url: string; child: Child };
  secret: string;
}

/** Creates the benchmark shop, then starts Kopek (and the baseline when needed) and waits for both. */
async function startServers(
  dbUrl: string,
  withBaseline: boolean,
  shop: ShopKind,
  children: Child[],
  signal: AbortSignal,
): Promise<Servers> {
  const secret = randomBytes(32).toString('hex');
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: dbUrl,
    KOPEK_MASTER_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    NODE_ENV: 'production',
  };
  for (const name of ['CHECKOUT_URL', 'GATEWAY_URL', 'DATA_DIR']) delete env[name];
  const shopArgs = [
    'shop',
    'create',
    '--id',
    String(SHOP_ID),
    '--secret',
    secret,
    ...(shop === 'test' ? ['--test'] : []),
    '--name',
    'Bench',
  ];
  // Kopek runs as an operator runs it (compiled, with the flags of `npm start`): what is measured is
  // what production runs, not TypeScript compiled on the fly.
  await runToEnd('kopek shop create', shopArgs, env, 60_000, signal, startKopek);

  const url = `http://127.0.0.1:${port}`;
  const child = startKopek('kopek', ['serve'], env, [...startFlags(), ...profileArgs('kopek')]);
  children.push(child);
  const servers: Servers = { kopek: { url, child }, secret };
  const waits = [waitForHealth(child, `${url}/health`, 60_000, signal)];
  if (withBaseline) {
    const basePort = await freePort();
    const baseUrl = `http://127.0.0.1:${basePort}`;
    const baseEnv = {
      ...process.env,
      DATABASE_URL: dbUrl,
      PORT: String(basePort),
      BASELINE_SHOP_ID: String(SHOP_ID),
      NODE_ENV: 'production',
    };
    const base = startCompiled('baseline', 'bench/baseline.ts', baseEnv, profileArgs('baseline'));
    children.push(base);
    servers.baseline = { url: baseUrl, child: base };
    waits.push(waitForHealth(base, `${baseUrl}/health`, 60_000, signal));
  }
  await Promise.all(waits);
  return servers;
}

async function main(): Promise<number> {
  const loadAtStart = Math.round((loadavg()[0] ?? 0) * 100) / 100;
  const names = process.argv.slice(2).filter((a) => a !== '--');
  // The billing engine is measured apart (bench/renewals.ts): its own store, its own processes.
  if (names.includes('renewals')) {
    if (names.length > 1) throw new Error('renewals runs on its own: npm run bench -- renewals');
    return runRenewals();
  }
  // And the memory of Kopek's processes (bench/memory.ts).
  if (names.includes('memory')) {
    if (names.length > 1) throw new Error('memory runs on its own: npm run bench -- memory');
    return runMemory();
  }
  // So is webhook delivery (bench/webhooks.ts).
  if (names.includes('webhooks')) {
    if (names.length > 1) throw new Error('webhooks runs on its own: npm run bench -- webhooks');
    return runWebhooks();
  }
  const scenarios = selectScenarios(names);
  const settings = {
    connections: intSetting('BENCH_CONNECTIONS', 50, 1),
    durationSec: intSetting('BENCH_DURATION', 10, 1),
    warmupSec: intSetting('BENCH_WARMUP', 2, 0),
    latencyRate: intSetting('BENCH_RATE', 200, 0),
    shop: shopKind(),
  };
  const budgetMs = (120 + scenarios.length * (2 * (settings.durationSec + settings.warmupSec) + 15)) * 1000;

  const abort = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (abort.signal.aborted) process.exit(130);
    console.error(`\n${signal}: stopping the benchmark and its servers (again to force)`);
    abort.abort(new Error(`interrupted by ${signal}`));
    setTimeout(() => process.exit(130), 30_000).unref();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const watchdog = setTimeout(() => {
    abort.abort(new Error(`the benchmark took longer than ${budgetMs / 1000} s`));
    // Should the clean-up itself hang, the exit handler still kills the servers.
    setTimeout(() => process.exit(1), 30_000).unref();
  }, budgetMs);
  watchdog.unref();
  const checkAborted = () => {
    if (abort.signal.aborted) throw abort.signal.reason;
  };

  const baseDbUrl = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || DEFAULT_DB;
  // Its CPU time is read from /proc when PostgreSQL runs on this machine.
  const localDatabase = ['127.0.0.1', 'localhost', '::1', '[::1]', ''].includes(new URL(baseDbUrl).hostname);
  const schema = `kopek_bench_${process.pid}_${randomBytes(3).toString('hex')}`;
  const children: Child[] = [];
  let schemaCreated = false;
  try {
    await sql(baseDbUrl, `CREATE SCHEMA ${schema}`);
    schemaCreated = true;
    console.log(`Schema ${schema}: creating the benchmark shop and starting the servers…`);
    const servers = await startServers(
      withSearchPath(baseDbUrl, schema),
      scenarios.some((s) => s.target === 'baseline'),
      settings.shop,
      children,
      abort.signal,
    );
    checkAborted();
    // A server dying mid-run ends the run with its last output rather than a page of refused connections.
    for (const child of children) {
      void child.exited.then((code) => {
        if (!abort.signal.aborted) abort.abort(describeFailure(child, `exited with ${code} during the run`));
      });
    }

    const skipped: { scenario: string; reason: string }[] = [];
    const toRun: Scenario[] = [];
    for (const s of scenarios) {
      if (s.target === 'kopek' && !(await routeExists(servers.kopek.url, s))) {
        if (names.includes(s.name)) throw new Error(`${s.method} ${s.path} answers 404: not implemented yet`);
        skipped.push({ scenario: s.name, reason: `${s.method} ${s.path} not implemented yet` });
        continue;
      }
      toRun.push(s);
    }
    // A baseline runs only when a Kopek scenario compared with it runs (or when it is asked for).
    const kept = toRun.filter(
      (s) => s.target === 'kopek' || toRun.some((k) => k.compareWith === s.name) || names.includes(s.name),
    );

    const auth = `Basic ${Buffer.from(`${SHOP_ID}:${servers.secret}`).toString('base64')}`;
    const loadFor = (s: Scenario): Omit<LoadOptions, 'durationSec'> => {
      const server = s.target === 'kopek' ? servers.kopek : servers.baseline;
      if (!server) throw new Error(`${s.name}: its server is not running`);
      return {
        baseUrl: server.url,
        headers: s.target === 'kopek' ? { authorization: auth } : {},
        connections: settings.connections,
        ...(server.child.proc.pid !== undefined ? { serverPid: server.child.proc.pid } : {}),
        localDatabase,
      };
    };
    // The p99 goal is also checked at a steady rate: at full load, latency is queueing by construction.
    const latencyRun = (s: Scenario) =>
      settings.latencyRate > 0 &&
      (s.goals?.maxP99Ms !== undefined || kept.some((k) => k.compareWith === s.name && k.goals?.maxP99Ms));

    const figures: Figures[] = [];
    const run = async (s: Scenario, durationSec: number, rate?: number, keep = true, pairedWith?: string) => {
      const label = labelOf({ scenario: s.name, rate: rate ?? null, ...(pairedWith ? { pairedWith } : {}) });
      console.log(
        `${label}: ${s.method} ${s.path}, ${settings.connections} connections, ${durationSec} s${keep ? '' : ' (warm-up)'}…`,
      );
      const load = { ...loadFor(s), durationSec };
      const f = rate
        ? await drivePaced(s, { ...load, rate }, abort.signal)
        : await drive(s, load, abort.signal);
      checkAborted();
      if (keep) figures.push(pairedWith ? { ...f, pairedWith } : f);
    };
    // Each Kopek scenario runs right after its own run of the baseline it is compared with: the
    // machine's speed drifts over minutes, and the ratio should compare like with like.
    const full = async (s: Scenario, pairedWith?: string) => {
      if (settings.warmupSec > 0) await run(s, settings.warmupSec, undefined, false, pairedWith);
      await run(s, settings.durationSec, undefined, true, pairedWith);
    };
    for (const s of kept) {
      if (s.target === 'kopek') {
        const base = kept.find((b) => b.name === s.compareWith);
        if (base) await full(base, s.name);
        await full(s);
      } else if (!kept.some((k) => k.compareWith === s.name)) {
        await full(s);
      }
    }
    for (const s of kept) {
      if (!latencyRun(s)) continue;
      // Warm again: a server idle through the other runs has let its pooled connections go.
      if (settings.warmupSec > 0) await run(s, settings.warmupSec, settings.latencyRate, false);
      await run(s, settings.durationSec, settings.latencyRate);
    }

    const report = buildReport(scenarios, figures, settings, skipped, loadAtStart);
    console.log(`\n${formatTable(report)}\n`);
    for (const s of skipped) console.log(`skipped ${s.scenario}: ${s.reason}`);
    if (report.goals.length > 0) console.log(`${formatGoals(report)}\n`);
    const { start, end } = report.machine.loadAverage;
    console.log(
      `${report.machine.cpus} CPUs, load average ${start} before and ${end} after the run; requests as a ${settings.shop} shop`,
    );
    console.log(`BENCH_JSON ${JSON.stringify(report)}`);
    const dir = join(ROOT, 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
    console.log(`Written to ${join('bench', 'results', 'latest.json')}`);

    const broken = brokenRuns(report);
    if (broken.length > 0) {
      console.error(
        `\nFAILED: most answers were not 2xx, so these figures say nothing:\n  ${broken.join('\n  ')}`,
      );
      return 1;
    }
    return 0;
  } finally {
    clearTimeout(watchdog);
    await Promise.all(children.map((c) => stopChild(c)));
    if (schemaCreated) {
      await sql(baseDbUrl, `DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch((err: unknown) =>
        console.error(`could not drop schema ${schema}:`, err),
      );
    }
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
