/**
 * `npm run bench -- memory`: how much memory Kopek's processes hold, run as an operator runs them
 * (compiled, `bin/kopek.js serve` with the flags of `npm start`), read from /proc/<pid>/status
 * (VmRSS every 50 ms, and VmHWM, the kernel's own peak) of each child process:
 *
 * 1. `server`: `kopek serve` on PostgreSQL (a throw-away schema): idle after start, idle again after
 *    a warm-up of the create endpoints, then its peak under the load of `npm run bench`'s create
 *    scenarios (customers, payments, subscriptions; autocannon, BENCH_CONNECTIONS at full load for
 *    BENCH_DURATION s each), idle BENCH_IDLE s after it, and once more BENCH_SETTLE s after it;
 * 2. `billing`: `kopek serve` on a store of BENCH_RENEWALS due subscriptions (default 100000, seeded
 *    as `npm run bench -- renewals` seeds them), from its start until every one is renewed (checked
 *    by SQL as the renewal benchmark checks it), and BENCH_IDLE s more;
 * 3. `deliverer`: `kopek serve` on a store of BENCH_WEBHOOKS notifications due (default 100000,
 *    seeded as `npm run bench -- webhooks` seeds them, to its receiver), until every one has arrived
 *    and is recorded (checked exactly once, in order, signed), and BENCH_IDLE s more;
 * 4. `embedded`: `kopek serve` on the embedded store (PGlite, DATA_DIR in a temporary directory), as
 *    the server in 1.
 *
 * BENCH_MEMORY=server,billing,deliverer,embedded picks some (all by default); BENCH_NODE_FLAGS runs
 * the processes with other Node flags than the start script's (to try some). BENCH_IDLE is how long
 * a process is left idle before an idle reading (s, default 10), BENCH_SETTLE how long after its load
 * a server is read once more (s, default 30; 0 skips it: a quiet server compacts its heap until V8
 * has shrunk its young generation, which after a burst takes some seconds), BENCH_WARMUP the seconds
 * of each create endpoint before the second idle reading (default 5). It prints a table with each target met or missed and one BENCH_JSON line, and writes
 * bench/results/memory.json.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { drive, type Figures } from './load.js';
import {
  type Child,
  cpuSeconds,
  describeFailure,
  freePort,
  guardRun,
  ROOT,
  runToEnd,
  startFlags,
  startKopek,
  stopChild,
  waitForHealth,
} from './processes.js';
import { verifyRenewals } from './renewals.js';
import { seedRenewals } from './renewals-seed.js';
import { SCENARIOS } from './scenarios.js';
import { awaitArrivals, awaitRecorded, verifyDelivery } from './webhooks.js';
import { startReceiver } from './webhooks-receiver.js';
import { seedWebhooks } from './webhooks-seed.js';
import { codeMeasured, intList, round, withClient, withSearchPath } from './workers.js';

const DEFAULT_DB = 'postgres://postgres@127.0.0.1:5432/test';
const PARTS = ['server', 'billing', 'deliverer', 'embedded'] as const;
type Part = (typeof PARTS)[number];

/** The issue's targets, in MB of RSS. */
export const MEMORY_TARGETS = {
  serverIdleMb: 120,
  serverLoadMb: 200,
  billingMb: 200,
  delivererMb: 200,
  embeddedMb: 350,
};

/** The create endpoints `npm run bench` loads. */
const LOAD = ['customers', 'payments', 'subscriptions'];

/** What /proc/<pid>/status says of a process's memory, in kB. */
export interface MemoryStatus {
  rssKb: number;
  hwmKb: number;
  anonKb: number;
  fileKb: number;
}

/** The process's memory now; undefined once it has ended (or off Linux). */
export function readStatus(pid: number): MemoryStatus | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? Number.NaN);
  const status = { rssKb: kb('VmRSS'), hwmKb: kb('VmHWM'), anonKb: kb('RssAnon'), fileKb: kb('RssFile') };
  return Number.isFinite(status.rssKb) ? status : undefined;
}

const mb = (kb: number) => round(kb / 1024, 1);

/** Samples a process's VmRSS every 50 ms while it runs; `window()` gives a phase's peak. */
class Sampler {
  private timer: NodeJS.Timeout;
  private open = new Set<{ peakKb: number }>();
  last: MemoryStatus | undefined;

  constructor(readonly pid: number) {
    this.timer = setInterval(() => this.sample(), 50);
    this.sample();
  }

  private sample(): MemoryStatus | undefined {
    const s = readStatus(this.pid);
    if (!s) return undefined;
    this.last = s;
    for (const w of this.open) w.peakKb = Math.max(w.peakKb, s.rssKb);
    return s;
  }

  /** Starts a phase; the function it returns ends it with the highest RSS seen during it. */
  window(): () => { peakMb: number; hwmMb: number; status: MemoryStatus | undefined } {
    const hwmBefore = this.sample()?.hwmKb ?? 0;
    const w = { peakKb: this.last?.rssKb ?? 0 };
    this.open.add(w);
    return () => {
      const s = this.sample();
      this.open.delete(w);
      // A peak between two samples still shows in VmHWM, when it rose during the phase.
      const hwm = s?.hwmKb ?? 0;
      const peakKb = hwm > hwmBefore ? Math.max(w.peakKb, hwm) : w.peakKb;
      return { peakMb: mb(peakKb), hwmMb: mb(hwm), status: s };
    };
  }

  /** RSS after `seconds` of no work asked of the process. */
  async idle(seconds: number): Promise<{ rssMb: number; status: MemoryStatus | undefined }> {
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const s = this.sample();
    return { rssMb: mb(s?.rssKb ?? Number.NaN), status: s };
  }

  stop() {
    clearInterval(this.timer);
  }
}

export interface Measurement {
  process: Part;
  phase: string;
  /** Idle: RSS at the end of the idle time. Peak: the highest RSS of the phase. */
  kind: 'idle' | 'peak';
  rssMb: number;
  /** VmHWM when the phase ended: the process's peak since it started. */
  hwmMb: number | null;
  targetMb: number;
  pass: boolean;
  /** RssAnon and RssFile when the phase ended (MB): the heaps and stacks, and mapped files. */
  anonMb: number | null;
  fileMb: number | null;
  note: string;
}

function measurement(
  part: Part,
  phase: string,
  kind: Measurement['kind'],
  rssMb: number,
  status: MemoryStatus | undefined,
  targetMb: number,
  note = '',
): Measurement {
  return {
    process: part,
    phase,
    kind,
    rssMb,
    hwmMb: status ? mb(status.hwmKb) : null,
    targetMb,
    pass: rssMb <= targetMb,
    anonMb: status ? mb(status.anonKb) : null,
    fileMb: status ? mb(status.fileKb) : null,
    note,
  };
}

interface Settings {
  idleSec: number;
  settleSec: number;
  warmupSec: number;
  durationSec: number;
  connections: number;
  renewals: number;
  webhooks: number;
}

/** The flags of `npm start`, or BENCH_NODE_FLAGS (space-separated) to try others. */
function nodeFlags(): string[] {
  const raw = process.env.BENCH_NODE_FLAGS;
  return raw === undefined ? startFlags() : raw.split(/\s+/).filter((f) => f !== '');
}

const one = (name: string, fallback: number, min: number) => intList(name, [fallback], min)[0] ?? fallback;

function baseEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'warn',
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    ...extra,
  };
  for (const name of ['CHECKOUT_URL', 'GATEWAY_URL', 'DATA_DIR', 'DATABASE_URL', 'PUBLIC_URL', 'PORT'])
    if (!(name in extra)) delete env[name];
  return env;
}

/** `kopek serve` with `env`, healthy, and sampled from its start. */
async function serve(
  name: string,
  env: NodeJS.ProcessEnv,
  children: Child[],
  signal: AbortSignal,
): Promise<{
  child: Child;
  url: string;
  sampler: Sampler;
  startup: () => ReturnType<ReturnType<Sampler['window']>>;
}> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = startKopek(name, ['serve'], { ...env, PORT: String(port), PUBLIC_URL: url }, nodeFlags());
  children.push(child);
  const pid = child.proc.pid;
  if (pid === undefined) throw describeFailure(child, 'did not start');
  const sampler = new Sampler(pid);
  const startup = sampler.window();
  void child.exited.then(() => sampler.stop());
  await waitForHealth(child, `${url}/health`, 120_000, signal);
  return { child, url, sampler, startup };
}

/** Loads the create endpoints one after the other, each for `seconds`; what each run did. */
async function loadCreates(
  url: string,
  auth: string,
  pid: number | undefined,
  seconds: number,
  connections: number,
  signal: AbortSignal,
): Promise<Figures[]> {
  const figures: Figures[] = [];
  for (const name of LOAD) {
    const scenario = SCENARIOS.find((s) => s.name === name);
    if (!scenario) throw new Error(`no scenario ${name}`);
    const f = await drive(
      scenario,
      {
        baseUrl: url,
        headers: { authorization: auth },
        connections,
        durationSec: seconds,
        ...(pid !== undefined ? { serverPid: pid } : {}),
        localDatabase: false,
      },
      signal,
    );
    if (signal.aborted) throw signal.reason;
    const ok = f.requests - f.non2xx;
    if (f.requests === 0 || ok < (f.requests + f.errors) / 2)
      throw new Error(
        `${name}: ${ok} of ${f.requests} answers were 2xx (${JSON.stringify(f.statusCodes)}), ${f.errors} errors`,
      );
    figures.push(f);
  }
  return figures;
}

/** The server scenario, on whatever store `env` names: idle, warm-up, idle, load. */
async function measureServer(
  part: 'server' | 'embedded',
  env: NodeJS.ProcessEnv,
  targets: { idleMb: number; loadMb: number },
  settings: Settings,
  children: Child[],
  signal: AbortSignal,
): Promise<Measurement[]> {
  const secret = randomBytes(32).toString('hex');
  const shopArgs = ['shop', 'create', '--id', '1', '--secret', secret, '--test', '--name', 'Memory'];
  await runToEnd('kopek shop create', shopArgs, env, 120_000, signal, startKopek);
  const auth = `Basic ${Buffer.from(`1:${secret}`).toString('base64')}`;
  const { child, url, sampler, startup } = await serve(`kopek serve (${part})`, env, children, signal);
  try {
    const out: Measurement[] = [];
    const started = startup();
    console.log(`  started (${started.peakMb} MB at most while starting); idle ${settings.idleSec} s…`);
    const idle1 = await sampler.idle(settings.idleSec);
    out.push(measurement(part, 'idle after start', 'idle', idle1.rssMb, idle1.status, targets.idleMb));
    if (settings.warmupSec > 0) {
      console.log(
        `  warm-up: ${LOAD.join(', ')}, ${settings.warmupSec} s each; then idle ${settings.idleSec} s…`,
      );
      await loadCreates(url, auth, child.proc.pid, settings.warmupSec, settings.connections, signal);
      const idle2 = await sampler.idle(settings.idleSec);
      out.push(measurement(part, 'idle after warm-up', 'idle', idle2.rssMb, idle2.status, targets.idleMb));
    }
    console.log(
      `  load: ${LOAD.join(', ')}, ${settings.connections} connections, ${settings.durationSec} s each…`,
    );
    const end = sampler.window();
    const figures = await loadCreates(
      url,
      auth,
      child.proc.pid,
      settings.durationSec,
      settings.connections,
      signal,
    );
    const load = end();
    out.push(
      measurement(
        part,
        'peak under the create load',
        'peak',
        load.peakMb,
        load.status,
        targets.loadMb,
        figures.map((f) => `${f.scenario} ${f.reqPerSec}/s ${f.serverCpuMsPerReq ?? '-'} ms CPU`).join(', '),
      ),
    );
    const idle3 = await sampler.idle(settings.idleSec);
    out.push(measurement(part, 'idle after the load', 'idle', idle3.rssMb, idle3.status, targets.idleMb));
    if (settings.settleSec > settings.idleSec) {
      // V8 gives back what traffic grew only after some idle time: a minute or two, not seconds.
      console.log(`  idle until ${settings.settleSec} s after the load…`);
      const settled = await sampler.idle(settings.settleSec - settings.idleSec);
      out.push(
        measurement(
          part,
          `idle ${settings.settleSec} s after the load`,
          'idle',
          settled.rssMb,
          settled.status,
          targets.idleMb,
        ),
      );
    }
    return out;
  } finally {
    await stopChild(child);
  }
}

async function measureBilling(
  baseDbUrl: string,
  settings: Settings,
  children: Child[],
  signal: AbortSignal,
): Promise<Measurement[]> {
  const schema = `kopek_bench_memory_${process.pid}_${randomBytes(3).toString('hex')}`;
  const url = withSearchPath(baseDbUrl, schema);
  await withClient(baseDbUrl, (c) => c.query(`CREATE SCHEMA ${schema}`));
  try {
    const n = settings.renewals;
    console.log(`  seeding ${n} due subscriptions (schema ${schema})…`);
    const seeded = await seedRenewals(url, n);
    const env = baseEnv({ DATABASE_URL: url, KOPEK_MASTER_KEY: seeded.masterKeyHex });
    const { child, sampler, startup } = await serve('kopek serve (billing)', env, children, signal);
    try {
      console.log('  billing…');
      const started = performance.now();
      const cpuAtStart = cpuSeconds(child.proc.pid) ?? 0;
      await withClient(url, async (c) => {
        let left = n;
        let progress = performance.now();
        while (left > 0) {
          if (signal.aborted) throw signal.reason;
          await new Promise((r) => setTimeout(r, 250));
          const { rows } = await c.query(
            'SELECT count(*)::int AS n FROM subscriptions WHERE paid_billing_cycles < 2',
          );
          if (rows[0].n < left) progress = performance.now();
          left = rows[0].n;
          if (performance.now() - progress > 60_000)
            throw describeFailure(child, `no renewal for 60 s, ${left} of ${n} left`);
        }
      });
      const seconds = (performance.now() - started) / 1000;
      const cpuMs = ((cpuSeconds(child.proc.pid) ?? 0) - cpuAtStart) * 1000;
      const verified = await verifyRenewals(url, seeded);
      if (!verified.ok)
        throw new Error(`not every subscription was renewed once: ${verified.problems.join('; ')}`);
      const idle = await sampler.idle(settings.idleSec);
      const run = startup();
      return [
        measurement(
          'billing',
          `peak, ${n} renewals and ${settings.idleSec} s after`,
          'peak',
          run.peakMb,
          run.status,
          MEMORY_TARGETS.billingMb,
          `${Math.round(n / seconds)} renewals/s, ${round(cpuMs / n, 3)} ms CPU each, each renewed exactly once`,
        ),
        measurement(
          'billing',
          'idle after the renewals',
          'idle',
          idle.rssMb,
          idle.status,
          MEMORY_TARGETS.billingMb,
        ),
      ];
    } finally {
      await stopChild(child);
    }
  } finally {
    await withClient(baseDbUrl, (c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).catch(
      (err: unknown) => console.error(`could not drop schema ${schema}:`, err),
    );
  }
}

async function measureDeliverer(
  baseDbUrl: string,
  settings: Settings,
  children: Child[],
  signal: AbortSignal,
): Promise<Measurement[]> {
  const schema = `kopek_bench_memory_${process.pid}_${randomBytes(3).toString('hex')}`;
  const url = withSearchPath(baseDbUrl, schema);
  await withClient(baseDbUrl, (c) => c.query(`CREATE SCHEMA ${schema}`));
  const receiver = await startReceiver();
  try {
    const n = settings.webhooks;
    console.log(`  seeding ${n} notifications due (schema ${schema})…`);
    const seeded = await seedWebhooks(url, { count: n, shops: 16, perResource: 2, url: receiver.url });
    receiver.trust(new Map(seeded.shops.map((s) => [s.id, s.publicKey])));
    const env = baseEnv({
      DATABASE_URL: url,
      KOPEK_MASTER_KEY: seeded.masterKeyHex,
      // The receiver is on loopback: test shops reach it within the operator's list.
      KOPEK_OUTBOUND_ALLOW: '127.0.0.1/32',
    });
    const { child, sampler, startup } = await serve('kopek serve (deliverer)', env, children, signal);
    try {
      console.log('  delivering…');
      const started = performance.now();
      const cpuAtStart = cpuSeconds(child.proc.pid) ?? 0;
      await awaitArrivals(receiver, n, url, 30, signal);
      const seconds = (performance.now() - started) / 1000;
      await awaitRecorded(url, 60_000);
      const cpuMs = ((cpuSeconds(child.proc.pid) ?? 0) - cpuAtStart) * 1000;
      const verified = await verifyDelivery(url, receiver, n);
      if (!verified.ok)
        throw new Error(`not every notification was delivered once: ${verified.problems.join('; ')}`);
      const idle = await sampler.idle(settings.idleSec);
      const run = startup();
      return [
        measurement(
          'deliverer',
          `peak, ${n} notifications and ${settings.idleSec} s after`,
          'peak',
          run.peakMb,
          run.status,
          MEMORY_TARGETS.delivererMb,
          `${Math.round(n / seconds)} deliveries/s, ${round(cpuMs / n, 3)} ms CPU each, each delivered exactly once`,
        ),
        measurement(
          'deliverer',
          'idle after the deliveries',
          'idle',
          idle.rssMb,
          idle.status,
          MEMORY_TARGETS.delivererMb,
        ),
      ];
    } finally {
      await stopChild(child);
    }
  } finally {
    await receiver.close();
    await withClient(baseDbUrl, (c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).catch(
      (err: unknown) => console.error(`could not drop schema ${schema}:`, err),
    );
  }
}

function formatTable(rows: Measurement[]): string {
  const header = ['process', 'phase', 'RSS MB', 'VmHWM MB', 'anon / file MB', 'target MB', 'result', 'note'];
  const cells = rows.map((r) => [
    r.process,
    r.phase,
    r.rssMb.toFixed(1),
    r.hwmMb === null ? '-' : r.hwmMb.toFixed(1),
    r.anonMb === null || r.fileMb === null ? '-' : `${r.anonMb.toFixed(0)} / ${r.fileMb.toFixed(0)}`,
    `≤ ${r.targetMb}`,
    r.pass ? 'PASS' : 'FAIL',
    r.note,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((row) => (row[i] ?? '').length)));
  const left = new Set([0, 1, 7]);
  const line = (c: string[]) =>
    `| ${c.map((x, i) => (left.has(i) ? x.padEnd(widths[i] ?? 0) : x.padStart(widths[i] ?? 0))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (left.has(i) ? `${'-'.repeat(w + 2)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(header), rule, ...cells.map(line)].join('\n');
}

/** Runs the memory benchmark; the process's exit code. */
export async function runMemory(): Promise<number> {
  const loadAtStart = round(loadavg()[0] ?? 0, 2);
  const raw = process.env.BENCH_MEMORY?.trim();
  const parts = raw ? raw.split(',').map((p) => p.trim()) : [...PARTS];
  const unknown = parts.filter((p) => !(PARTS as readonly string[]).includes(p));
  if (unknown.length > 0)
    throw new Error(`BENCH_MEMORY: unknown ${unknown.join(', ')}; known: ${PARTS.join(', ')}`);
  const settings: Settings = {
    idleSec: one('BENCH_IDLE', 10, 1),
    settleSec: one('BENCH_SETTLE', 30, 0),
    warmupSec: one('BENCH_WARMUP', 5, 0),
    durationSec: one('BENCH_DURATION', 10, 1),
    connections: one('BENCH_CONNECTIONS', 50, 1),
    renewals: one('BENCH_RENEWALS', 100_000, 1),
    webhooks: one('BENCH_WEBHOOKS', 100_000, 2),
  };
  const baseDbUrl = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || DEFAULT_DB;

  const budgetSec =
    600 +
    2 * settings.settleSec +
    settings.renewals / 200 +
    settings.webhooks / 200 +
    2 * 8 * (settings.durationSec + settings.warmupSec);
  const { children, signal, done } = guardRun(budgetSec);

  // Built once up front (bin/kopek.js would build a stale dist/ too, but inside a measured process's start).
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  const rows: Measurement[] = [];
  const kopek = codeMeasured();
  try {
    if (parts.includes('server')) {
      const schema = `kopek_bench_memory_${process.pid}_${randomBytes(3).toString('hex')}`;
      await withClient(baseDbUrl, (c) => c.query(`CREATE SCHEMA ${schema}`));
      console.log(`\nserver: kopek serve on PostgreSQL (schema ${schema})`);
      try {
        const env = baseEnv({
          DATABASE_URL: withSearchPath(baseDbUrl, schema),
          KOPEK_MASTER_KEY: randomBytes(32).toString('hex'),
        });
        const targets = { idleMb: MEMORY_TARGETS.serverIdleMb, loadMb: MEMORY_TARGETS.serverLoadMb };
        rows.push(...(await measureServer('server', env, targets, settings, children, signal)));
      } finally {
        await withClient(baseDbUrl, (c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).catch(
          (err: unknown) => console.error(`could not drop schema ${schema}:`, err),
        );
      }
    }
    if (parts.includes('billing')) {
      console.log(`\nbilling: kopek serve renewing ${settings.renewals} due subscriptions`);
      rows.push(...(await measureBilling(baseDbUrl, settings, children, signal)));
    }
    if (parts.includes('deliverer')) {
      console.log(`\ndeliverer: kopek serve delivering ${settings.webhooks} notifications`);
      rows.push(...(await measureDeliverer(baseDbUrl, settings, children, signal)));
    }
    if (parts.includes('embedded')) {
      const dir = mkdtempSync(join(tmpdir(), 'kopek-bench-memory-'));
      console.log(`\nembedded: kopek serve on the embedded store (DATA_DIR ${dir})`);
      try {
        const env = baseEnv({ DATA_DIR: dir, KOPEK_MASTER_KEY: randomBytes(32).toString('hex') });
        const targets = { idleMb: MEMORY_TARGETS.embeddedMb, loadMb: MEMORY_TARGETS.embeddedMb };
        rows.push(...(await measureServer('embedded', env, targets, settings, children, signal)));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    done();
    await Promise.all(children.splice(0).map((c) => stopChild(c)));
  }

  const cpu = cpus();
  const report = {
    date: new Date().toISOString(),
    kopek,
    machine: {
      cpus: cpu.length,
      cpuModel: cpu[0]?.model ?? 'unknown',
      memoryGb: round(totalmem() / 2 ** 30, 1),
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
      loadAverage: { start: loadAtStart, end: round(loadavg()[0] ?? 0, 2) },
    },
    settings: { ...settings, nodeFlags: nodeFlags() },
    targets: MEMORY_TARGETS,
    results: rows,
  };
  console.log(`\n${formatTable(rows)}\n`);
  const { start, end } = report.machine.loadAverage;
  console.log(`${report.machine.cpus} CPUs, load average ${start} before and ${end} after the run`);
  console.log(`BENCH_JSON ${JSON.stringify(report)}`);
  const dir = join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'memory.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(`Written to ${join('bench', 'results', 'memory.json')}`);
  // As the other benchmarks: a missed target is reported, not an error (the figures stand).
  for (const r of rows.filter((x) => !x.pass))
    console.log(`MISSED  ${r.process}, ${r.phase}: ${r.rssMb} MB > ${r.targetMb} MB`);
  return 0;
}
