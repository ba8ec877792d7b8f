/**
 * `npm run bench -- renewals`: the billing engine on PostgreSQL. For each count of subscriptions
 * (BENCH_RENEWALS, default 100000; a comma-separated list runs each) and each number of engine
 * processes (BENCH_RENEWAL_PROCESSES, default "1,2"), in a schema of its own:
 *
 * 1. seeds that many due subscriptions (renewals-seed.ts; not measured);
 * 2. runs the baseline: as many processes as engines, each inserting single rows shaped like the
 *    ledger's payment row into a bare table, one transaction per row, on one connection, for
 *    BENCH_DURATION seconds after BENCH_WARMUP;
 * 3. runs the engine: that many processes, each one `billDue` loop (what a Kopek instance runs),
 *    started together, until nothing is due; renewals/s counts from the start to the last to finish;
 * 4. checks by SQL that every subscription was renewed exactly once, and drops the schema.
 *
 * It prints renewals/s, the ratio to the baseline's rows/s, CPU per renewal of the engine and of
 * PostgreSQL, statements per renewal, WAL per renewal and RSS, as a table and as one BENCH_JSON line,
 * and writes bench/results/renewals.json. BENCH_PROFILE=1 writes the engine processes' CPU profiles
 * to bench/results/profiles/renewals-<count>x<processes>/ and prints where their time went.
 * BENCH_RENEWAL_BATCH changes the engine's claim batch (its default otherwise), BENCH_LOG_LEVEL the
 * engine's LOG_LEVEL (default warn, as the HTTP benchmark runs its server), BENCH_SYNCHRONOUS_COMMIT
 * the connections' synchronous_commit (the server's setting otherwise).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { type ProfileSummary, summarizeProfile } from './cpuprofile.js';
import { type Child, guardRun, ROOT, stopChild } from './processes.js';
import type { BaselineDone, EngineDone } from './renewals-messages.js';
import { type SeededStore, seedRenewals } from './renewals-seed.js';
import {
  checkpoint,
  codeMeasured,
  finish,
  intList,
  markDatabase,
  profilesOf,
  release,
  round,
  sinceMark,
  startWorkers,
  withClient,
  withSearchPath,
} from './workers.js';

const WORKER = 'renewals-worker.ts';

const DEFAULT_DB = 'postgres://postgres@127.0.0.1:5432/test';
/** The issue's targets, with the in-process sandbox acquirer on the 2-core machine. */
export const RENEWAL_GOALS = { minRatio: 0.3, minPerSec: 5000 };

export interface RenewalRun {
  subscriptions: number;
  processes: number;
  seedSec: number;
  /** The code the engine processes loaded: others may commit to this tree while a run goes on. */
  kopek: { commit: string; srcChanged: string[] };
  /** The INSERT loop's rows/s: the mean of its runs right before and right after the engine's. */
  baseline: { rowsPerSec: number; before: BaselineFigures; after: BaselineFigures };
  renewalsPerSec: number;
  ratio: number;
  seconds: number;
  /**
   * Engine processes' CPU; the CPU of the PostgreSQL backends serving them, and of every PostgreSQL
   * process of the machine (null when the database runs elsewhere).
   */
  engineCpuMsPerRenewal: number;
  databaseCpuMsPerRenewal: number | null;
  databaseAllCpuMsPerRenewal: number | null;
  statementsPerRenewal: number;
  roundTripsPerRenewal: number;
  transactionsPerRenewal: number;
  /** Statements per renewal, by statement, most frequent first. */
  statements: { statement: string; perRenewal: number }[];
  /** WAL written per renewal (the whole server's, so anything else running adds to it). */
  walBytesPerRenewal: number;
  /** Per engine process. */
  rss: {
    maxRssMb: number;
    rssAtStartMb: number;
    rssPeakRunMb: number;
    heapUsedMb: number;
    /** RSS when a tenth, half and all of the run's seconds had passed. */
    rssAtTenthHalfEndMb: number[];
  }[];
  summary: EngineDone['summary'];
  verified: Verification;
  profile?: ProfileSummary;
}

export interface Verification {
  ok: boolean;
  problems: string[];
  counts: Record<string, number>;
}

/** Every subscription renewed exactly once: one successful period-2 charge, one payment, paid up. */
export async function verifyRenewals(url: string, seeded: SeededStore): Promise<Verification> {
  return withClient(url, async (c) => {
    // Set-based, so that it takes seconds at a million: payments are tied to their subscription by
    // tracking id (`<subscription>-<period>`, `-<attempt>` after the first attempt).
    const { rows } = await c.query(
      `WITH period_2_payments AS (
         SELECT substring(tracking_id FROM '^(sbs_[0-9A-Za-z]+)-2(?:-[0-9]+)?$') AS subscription_id,
                count(*) AS n
         FROM transactions WHERE type = 'payment' AND tracking_id ~ '-2(-[0-9]+)?$' GROUP BY 1
       ), period_2_successful AS (
         SELECT subscription_id, count(*) AS n FROM subscription_charges
         WHERE period = 2 AND status = 'successful' GROUP BY 1
       )
       SELECT
         (SELECT count(*) FROM subscriptions)::int AS subscriptions,
         (SELECT count(*) FROM subscriptions
           WHERE state = 'active' AND paid_billing_cycles = 2 AND number_failed_payment_attempts = 0
             AND renew_at > now() AND cancelled_at IS NULL)::int AS renewed_and_not_due,
         (SELECT count(*) FROM subscription_charges WHERE period = 2)::int AS period_2_charge_records,
         (SELECT count(*) FROM subscription_charges WHERE period = 2 AND status = 'successful')::int
           AS period_2_successful,
         (SELECT count(*) FROM subscriptions s LEFT JOIN period_2_successful c ON c.subscription_id = s.id
           WHERE coalesce(c.n, 0) <> 1)::int AS without_exactly_one_successful_period_2,
         (SELECT count(*) FROM subscription_charges
           WHERE status IN ('pending', 'unknown', 'incomplete'))::int AS open_charge_records,
         (SELECT count(*) FROM transactions WHERE type = 'payment')::int AS payments_in_ledger,
         (SELECT count(*) FROM subscriptions s LEFT JOIN period_2_payments p ON p.subscription_id = s.id
           WHERE coalesce(p.n, 0) <> 1)::int AS without_exactly_one_period_2_payment,
         (SELECT count(*) FROM period_2_payments p LEFT JOIN subscriptions s ON s.id = p.subscription_id
           WHERE s.id IS NULL)::int AS period_2_payments_of_no_subscription,
         (SELECT count(*) FROM subscription_charges c JOIN transactions t ON t.uid = c.transaction_uid
           WHERE c.period = 2 AND t.status = 'successful' AND t.amount = c.amount
             AND t.tracking_id = c.subscription_id || '-2')::int AS period_2_records_matching_payment,
         (SELECT count(*) FROM events WHERE event = 'renewed.subscription')::int AS renewed_events`,
    );
    const counts = rows[0] as Record<string, number>;
    const n = seeded.count;
    const want: Record<string, number> = {
      subscriptions: n,
      renewed_and_not_due: n,
      period_2_charge_records: n,
      period_2_successful: n,
      without_exactly_one_successful_period_2: 0,
      open_charge_records: 0,
      payments_in_ledger: 2 * n,
      without_exactly_one_period_2_payment: 0,
      period_2_payments_of_no_subscription: 0,
      period_2_records_matching_payment: n,
      renewed_events: n,
    };
    const problems = Object.entries(want)
      .filter(([k, v]) => counts[k] !== v)
      .map(([k, v]) => `${k}: ${counts[k]}, expected ${v}`);
    return { ok: problems.length === 0, problems, counts };
  });
}

interface BaselineFigures {
  rowsPerSec: number;
  /** CPU of the inserting processes, and of the PostgreSQL backends serving them (warm-up included). */
  cpuMsPerRow: number;
  databaseCpuMsPerRow: number | null;
  walBytesPerRow: number;
}

/** k processes, each a single-row INSERT loop on its own connection. */
async function runBaseline(
  k: number,
  env: NodeJS.ProcessEnv,
  settings: { durationSec: number; warmupSec: number },
  db: { url: string; local: boolean; tag: string },
  children: Child[],
): Promise<BaselineFigures> {
  const workers = await startWorkers(WORKER, 'baseline', k, env, [], children);
  const mark = await markDatabase(db.url, db.local, db.tag);
  const base = await finish<BaselineDone>(workers, settings);
  const used = await sinceMark(db.url, mark);
  await release(workers);
  const rows = base.reduce((a, b) => a + b.rows, 0);
  const allRows = base.reduce((a, b) => a + b.allRows, 0);
  const seconds = Math.max(...base.map((b) => b.ms)) / 1000;
  return {
    rowsPerSec: Math.round(rows / seconds),
    cpuMsPerRow: round(base.reduce((a, b) => a + b.cpuMs, 0) / rows, 3),
    databaseCpuMsPerRow: used.backendsSec === null ? null : round((used.backendsSec * 1000) / allRows, 3),
    walBytesPerRow: Math.round(used.walBytes / allRows),
  };
}

async function runOne(
  baseDbUrl: string,
  count: number,
  k: number,
  settings: { durationSec: number; warmupSec: number },
  local: boolean,
  children: Child[],
  signal: AbortSignal,
): Promise<RenewalRun> {
  const schema = `kopek_bench_renewals_${process.pid}_${randomBytes(3).toString('hex')}`;
  const url = withSearchPath(baseDbUrl, schema);
  const db = { url: baseDbUrl, local, tag: schema };
  const checkAborted = () => {
    if (signal.aborted) throw signal.reason;
  };
  await withClient(baseDbUrl, (c) => c.query(`CREATE SCHEMA ${schema}`));
  try {
    console.log(`\n${count} subscriptions, ${k} engine process${k === 1 ? '' : 'es'} (schema ${schema})`);
    const seedStarted = performance.now();
    const seeded = await seedRenewals(url, count);
    const seedSec = round((performance.now() - seedStarted) / 1000, 1);
    const [model] = await withClient(url, async (c) => {
      await c.query(
        `CREATE TABLE baseline_payments (LIKE transactions INCLUDING DEFAULTS INCLUDING IDENTITY)`,
      );
      await c.query('ALTER TABLE baseline_payments ADD PRIMARY KEY (uid)');
      await c.query('CREATE INDEX ON baseline_payments (shop_id, seq DESC)');
      const { rows } = await c.query("SELECT uid FROM transactions WHERE tracking_id = $1 || '-1'", [
        seeded.originalId,
      ]);
      return rows.map((r) => r.uid as string);
    });
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: url,
      KOPEK_MASTER_KEY: seeded.masterKeyHex,
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'warn',
      NODE_ENV: 'production',
      BENCH_BASELINE_MODEL: model,
    };
    for (const name of ['GATEWAY_URL', 'CHECKOUT_URL', 'DATA_DIR', 'PUBLIC_URL']) delete env[name];
    checkAborted();

    // Each phase starts with no dirty pages of the one before to write. The baseline runs right
    // before and right after the engine: this machine's disk and CPUs change speed within minutes.
    console.log(
      `  seeded in ${seedSec} s; baseline: ${k} × single-row INSERT loop, ${settings.durationSec} s…`,
    );
    await checkpoint(baseDbUrl);
    const before = await runBaseline(k, env, settings, db, children);
    console.log(`  baseline: ${before.rowsPerSec} rows/s; engine: billing ${count} due subscriptions…`);
    await checkpoint(baseDbUrl);
    checkAborted();

    const profileDir = join(ROOT, 'bench', 'results', 'profiles', `renewals-${count}x${k}`);
    const profiling = Boolean(process.env.BENCH_PROFILE);
    if (profiling) rmSync(profileDir, { recursive: true, force: true });
    const nodeArgs = profiling ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
    const kopek = codeMeasured();
    const engines = await startWorkers(WORKER, 'engine', k, env, nodeArgs, children);
    const mark = await markDatabase(baseDbUrl, local, schema);
    const started = performance.now();
    const done = await finish<EngineDone>(engines, {});
    const seconds = (performance.now() - started) / 1000;
    const used = await sinceMark(baseDbUrl, mark);
    // The profiles are written as the processes exit.
    await release(engines);
    checkAborted();

    const verified = await verifyRenewals(url, seeded);
    console.log(`  engine done in ${round(seconds, 1)} s; baseline again…`);
    await checkpoint(baseDbUrl);
    const after = await runBaseline(k, env, settings, db, children);

    const charged = done.reduce((a, d) => a + d.summary.charged, 0);
    const summary = done.reduce(
      (a, d) => {
        for (const key of Object.keys(a) as (keyof typeof a)[]) a[key] += d.summary[key];
        return a;
      },
      { charged: 0, successful: 0, failed: 0, errors: 0, unknown: 0, ended: 0, resolved: 0 },
    );
    const statements = new Map<string, number>();
    for (const d of done)
      for (const [s, n] of Object.entries(d.statements)) statements.set(s, (statements.get(s) ?? 0) + n);
    const totalStatements = [...statements.values()].reduce((a, b) => a + b, 0);
    const per = (n: number) => (charged > 0 ? n / charged : 0);
    const renewalsPerSec = Math.round(charged / seconds);
    const baselineRowsPerSec = Math.round((before.rowsPerSec + after.rowsPerSec) / 2);
    const profiles = profiling
      ? profilesOf(
          profileDir,
          engines.map((e) => e.proc.pid),
        )
      : undefined;
    return {
      subscriptions: count,
      processes: k,
      seedSec,
      kopek,
      baseline: { rowsPerSec: baselineRowsPerSec, before, after },
      renewalsPerSec,
      ratio: round(renewalsPerSec / baselineRowsPerSec, 2),
      seconds: round(seconds, 1),
      engineCpuMsPerRenewal: round(per(done.reduce((a, d) => a + d.cpuMs, 0)), 3),
      databaseCpuMsPerRenewal: used.backendsSec === null ? null : round(per(used.backendsSec * 1000), 3),
      databaseAllCpuMsPerRenewal: used.allSec === null ? null : round(per(used.allSec * 1000), 3),
      statementsPerRenewal: round(per(totalStatements), 2),
      roundTripsPerRenewal: round(per(done.reduce((a, d) => a + d.roundTrips, 0)), 3),
      transactionsPerRenewal: round(per(done.reduce((a, d) => a + d.transactions, 0)), 3),
      statements: [...statements.entries()]
        .sort((a, b) => b[1] - a[1])
        .map(([statement, n]) => ({ statement, perRenewal: round(per(n), 3) })),
      walBytesPerRenewal: Math.round(per(used.walBytes)),
      rss: done.map(({ maxRssMb, rssAtStartMb, rssPeakRunMb, heapUsedMb, rssEverySecondMb: t }) => ({
        maxRssMb,
        rssAtStartMb,
        rssPeakRunMb,
        heapUsedMb,
        rssAtTenthHalfEndMb: [0.1, 0.5, 1].flatMap((f) => {
          const v = t[Math.max(0, Math.ceil(t.length * f) - 1)];
          return v === undefined ? [] : [v];
        }),
      })),
      summary,
      verified,
      ...(profiles
        ? {
            profile: summarizeProfile(
              profiles,
              done.map((d) => d.window),
            ),
          }
        : {}),
    };
  } finally {
    await Promise.all(children.splice(0).map((c) => stopChild(c)));
    await withClient(baseDbUrl, (c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).catch(
      (err: unknown) => console.error(`could not drop schema ${schema}:`, err),
    );
  }
}

function formatRuns(runs: RenewalRun[]): string {
  const header = [
    'subscriptions',
    'engine processes',
    'renewals/s',
    'baseline rows/s (before, after)',
    'ratio',
    'engine CPU ms/renewal',
    'PostgreSQL backends CPU ms/renewal',
    'statements/renewal',
    'round trips/renewal',
    'WAL KB/renewal',
    'RSS MB: start → peak',
    'verified',
  ];
  const rows = runs.map((r) => [
    String(r.subscriptions),
    String(r.processes),
    String(r.renewalsPerSec),
    `${r.baseline.rowsPerSec} (${r.baseline.before.rowsPerSec}, ${r.baseline.after.rowsPerSec})`,
    r.ratio.toFixed(2),
    r.engineCpuMsPerRenewal.toFixed(3),
    r.databaseCpuMsPerRenewal === null ? '-' : r.databaseCpuMsPerRenewal.toFixed(3),
    r.statementsPerRenewal.toFixed(2),
    r.roundTripsPerRenewal.toFixed(3),
    (r.walBytesPerRenewal / 1024).toFixed(1),
    r.rss.map((x) => `${x.rssAtStartMb} → ${x.rssPeakRunMb}`).join(', '),
    r.verified.ok ? 'yes' : 'NO',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padStart(widths[i] ?? 0)).join(' | ')} |`;
  const rule = `|${widths.map((w) => `${'-'.repeat(w + 1)}:`).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** Runs the renewal benchmark; the process's exit code. */
export async function runRenewals(): Promise<number> {
  const loadAtStart = round(loadavg()[0] ?? 0, 2);
  const counts = intList('BENCH_RENEWALS', [100_000], 1);
  const processes = intList('BENCH_RENEWAL_PROCESSES', [1, 2], 1);
  const settings = {
    durationSec: intList('BENCH_DURATION', [10], 1)[0] ?? 10,
    warmupSec: intList('BENCH_WARMUP', [2], 0)[0] ?? 2,
  };
  const baseDbUrl = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || DEFAULT_DB;
  const local = ['127.0.0.1', 'localhost', '::1', '[::1]', ''].includes(new URL(baseDbUrl).hostname);

  // Seeding runs about 3,000 subscriptions/s; the engine is given down to 50 renewals/s.
  const budgetSec = counts.reduce((a, n) => a + processes.length * (120 + n / 50), 0);
  const { children, signal, done } = guardRun(budgetSec);

  const runs: RenewalRun[] = [];
  try {
    for (const count of counts) {
      for (const k of processes) {
        runs.push(await runOne(baseDbUrl, count, k, settings, local, children, signal));
        const r = runs[runs.length - 1] as RenewalRun;
        console.log(
          `  ${r.renewalsPerSec} renewals/s (${r.seconds} s), ratio ${r.ratio}; verified: ${r.verified.ok ? 'every subscription renewed once' : r.verified.problems.join('; ')}`,
        );
      }
    }
  } finally {
    done();
  }

  const cpu = cpus();
  const report = {
    date: new Date().toISOString(),
    kopek: codeMeasured(),
    machine: {
      cpus: cpu.length,
      cpuModel: cpu[0]?.model ?? 'unknown',
      memoryGb: round(totalmem() / 2 ** 30, 1),
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
      loadAverage: { start: loadAtStart, end: round(loadavg()[0] ?? 0, 2) },
    },
    settings: {
      ...settings,
      batch: Number(process.env.BENCH_RENEWAL_BATCH || 0) || 'engine default',
      logLevel: process.env.BENCH_LOG_LEVEL || 'warn',
      synchronousCommit: process.env.BENCH_SYNCHRONOUS_COMMIT || 'server default',
    },
    goals: RENEWAL_GOALS,
    runs,
  };
  console.log(`\n${formatRuns(runs)}\n`);
  console.log(
    'RSS: of each engine process when the run started, and the highest sampled during it (every 20 ms)',
  );
  for (const r of runs) {
    const ok = (met: boolean) => (met ? 'MET   ' : 'MISSED');
    console.log(
      `${ok(r.ratio >= RENEWAL_GOALS.minRatio)}  ${r.subscriptions}×${r.processes}: renewals/s ratio to the INSERT loop ≥ ${RENEWAL_GOALS.minRatio} (measured ${r.ratio})`,
    );
    console.log(
      `${ok(r.renewalsPerSec >= RENEWAL_GOALS.minPerSec)}  ${r.subscriptions}×${r.processes}: renewals/s ≥ ${RENEWAL_GOALS.minPerSec} (measured ${r.renewalsPerSec})`,
    );
  }
  const first = runs[0];
  if (first) {
    console.log(
      `\nStatements per renewal (${first.subscriptions}×${first.processes}; ${first.transactionsPerRenewal} transactions per renewal):`,
    );
    for (const s of first.statements) console.log(`  ${s.perRenewal.toFixed(3).padStart(7)}  ${s.statement}`);
  }
  for (const r of runs) {
    if (!r.profile) continue;
    console.log(`\nWhere the engine's CPU went (${r.subscriptions}×${r.processes}, ${r.profile.file}):`);
    console.log(r.profile.text);
  }
  const { start, end } = report.machine.loadAverage;
  console.log(`\n${report.machine.cpus} CPUs, load average ${start} before and ${end} after the run`);
  console.log(`BENCH_JSON ${JSON.stringify(report)}`);
  const dir = join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'renewals.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(`Written to ${join('bench', 'results', 'renewals.json')}`);

  const failed = runs.filter((r) => !r.verified.ok);
  if (failed.length > 0) {
    console.error(
      `\nFAILED: not every subscription was renewed exactly once, so these figures say nothing:\n  ${failed
        .map((r) => `${r.subscriptions}×${r.processes}: ${r.verified.problems.join('; ')}`)
        .join('\n  ')}`,
    );
    return 1;
  }
  return 0;
}
