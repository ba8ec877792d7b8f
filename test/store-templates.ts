import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import pg from 'pg';
import { migrate } from '../src/db/migrate.js';
import { createPgliteDb } from '../src/db/pglite.js';
import { createPostgresDb } from '../src/db/postgres.js';

/**
 * What the run's set-up prepares once so that each test asks for a fresh store in a fraction of a
 * second instead of creating and migrating one (seconds on the embedded store).
 */
export interface StoreTemplates {
  /** Files of `dumpDataDir()`: an embedded store just created, and the same store migrated. */
  pglite: { blank: string; migrated: string };
  /** With DATABASE_URL: the run's databases, all named `<prefix>_…`. */
  pg?: {
    /** Databases of this run are named `<prefix>_…`: the end of the run drops them all. */
    prefix: string;
    /** The migrated database that fresh stores are copies of (CREATE DATABASE … TEMPLATE). */
    template: string;
    /** The URL of the run's shared store (a copy of the template), for the test harness. */
    sharedUrl: string;
  };
}

/** Databases of a run are `kopek_t_<start time, base 36>_<random>_…`. */
const RUN_PREFIX = 'kopek_t_';
/** Databases left behind by a run that never reached its end (killed) go after this long. */
const STALE_MS = 6 * 3600_000;

export function databaseUrl(base: string, database: string): string {
  const u = new URL(base);
  u.pathname = `/${database}`;
  return u.toString();
}

/**
 * The run's databases do not wait for the disk at each commit (`synchronous_commit = off`): every
 * session on them, the tests' and the Kopek processes' they start, commits without the flush of the
 * write-ahead log that the machine's PostgreSQL otherwise waits milliseconds for. What a commit makes
 * visible, and when, is the same; only a crash of PostgreSQL itself could lose the last commits, and
 * the run's databases are dropped at its end anyway. A database made from a template does not inherit
 * the setting, so each is given it.
 */
export async function createRunDatabase(admin: pg.Client, name: string, template: string): Promise<void> {
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  await admin.query(`ALTER DATABASE ${name} SET synchronous_commit = off`);
}

/** A session for CREATE and DROP DATABASE, which need not wait for the disk either. */
export async function adminClient(base: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: base });
  await c.connect();
  await c.query('SET synchronous_commit = off');
  return c;
}

async function withAdmin<T>(base: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = await adminClient(base);
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

async function dropDatabases(base: string, names: string[]): Promise<void> {
  // A few at once: each drop waits for its files to go, and they wait on the disk, not the CPU.
  const queue = [...names];
  const worker = () =>
    withAdmin(base, async (c) => {
      for (let name = queue.shift(); name; name = queue.shift()) {
        await c.query(`ALTER DATABASE ${name} WITH IS_TEMPLATE false ALLOW_CONNECTIONS true`);
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }
    });
  await Promise.all([worker(), worker(), worker()]);
}

async function runDatabases(base: string, prefix: string): Promise<string[]> {
  return withAdmin(base, async (c) => {
    const rows = await c.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE starts_with(datname, $1) ORDER BY datname`,
      [prefix],
    );
    return rows.rows.map((r) => r.datname);
  });
}

/** The databases of runs that started long ago and were killed before their end dropped them. */
async function staleDatabases(base: string, now: number): Promise<string[]> {
  const all = await runDatabases(base, RUN_PREFIX);
  return all.filter((name) => {
    const started = Number.parseInt(name.slice(RUN_PREFIX.length).split('_')[0] ?? '', 36);
    return Number.isFinite(started) && now - started > STALE_MS;
  });
}

async function prepareEmbedded(dir: string): Promise<StoreTemplates['pglite']> {
  const db = await createPgliteDb(undefined);
  try {
    const blank = join(dir, 'blank.tar');
    await writeFile(blank, Buffer.from(await (await db.dumpDataDir()).arrayBuffer()));
    await migrate(db);
    const migrated = join(dir, 'migrated.tar');
    await writeFile(migrated, Buffer.from(await (await db.dumpDataDir()).arrayBuffer()));
    return { blank, migrated };
  } finally {
    await db.close();
  }
}

const ROOT = join(import.meta.dirname, '..');
/** Where runs keep the embedded templates for the next run (npm ci clears it with node_modules). */
const CACHE = join(ROOT, 'node_modules', '.cache', 'kopek-store-templates');
/** A kept template nobody has used for this long goes when a run makes a new one. */
const CACHE_UNUSED_MS = 24 * 3600_000;

/** Every file under `path`, by path relative to the root, sorted. */
function filesUnder(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((entry) => filesUnder(join(path, entry)));
}

/**
 * What an embedded template is made of: the store's code and migrations (everything under src/db),
 * this file, and the PGlite release. Two runs that agree on these make the same templates.
 */
function embeddedTemplateKey(): string {
  const hash = createHash('sha256');
  const pglite = join(ROOT, 'node_modules', '@electric-sql', 'pglite', 'package.json');
  for (const file of [
    ...filesUnder(join(ROOT, 'src', 'db')),
    join(ROOT, 'test', 'store-templates.ts'),
    pglite,
  ]) {
    hash.update(relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * The embedded templates, made once and kept under node_modules/.cache for later runs while the store's
 * code, its migrations and PGlite stay as they are: a second run (the PostgreSQL pass after the
 * PGlite one, or one test file after another) skips creating and migrating a store in its set-up.
 * A run makes them in a directory of its own beside them and moves that into place whole, so a run
 * never reads a half-written template, and runs side by side at worst both make them.
 */
async function embeddedTemplates(dir: string): Promise<StoreTemplates['pglite']> {
  const kept = join(CACHE, embeddedTemplateKey());
  const inKept = { blank: join(kept, 'blank.tar'), migrated: join(kept, 'migrated.tar') };
  if (existsSync(inKept.blank) && existsSync(inKept.migrated)) {
    const now = new Date();
    await utimes(kept, now, now).catch(() => undefined);
    return inKept;
  }
  const staging = await mkdir(CACHE, { recursive: true })
    .then(() => mkdtemp(join(CACHE, 'making-')))
    .catch(() => undefined);
  // Nowhere to keep them: this run's own directory.
  if (!staging) return prepareEmbedded(dir);
  try {
    await prepareEmbedded(staging);
    // Fails when a run alongside kept its own first: theirs serves as well.
    await rename(staging, kept).catch(() => undefined);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  // Not kept after all (it should not happen): this run makes its own.
  if (!existsSync(inKept.migrated)) return prepareEmbedded(dir);
  for (const entry of readdirSync(CACHE)) {
    const path = join(CACHE, entry);
    if (path !== kept && Date.now() - statSync(path).mtimeMs > CACHE_UNUSED_MS)
      await rm(path, { recursive: true, force: true }).catch(() => undefined);
  }
  return inKept;
}

async function preparePostgres(base: string, now: number): Promise<NonNullable<StoreTemplates['pg']>> {
  const prefix = `${RUN_PREFIX}${now.toString(36)}_${randomBytes(3).toString('hex')}`;
  const template = `${prefix}_template`;
  const shared = `${prefix}_shared`;
  // From template0, which nobody can be connected to (CREATE DATABASE refuses a busy template).
  await withAdmin(base, (c) => createRunDatabase(c, template, 'template0'));
  const db = createPostgresDb(databaseUrl(base, template), 1);
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
  await withAdmin(base, async (c) => {
    // No connection to the template, ever: CREATE DATABASE refuses a template someone is on.
    await c.query(`ALTER DATABASE ${template} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
    await createRunDatabase(c, shared, template);
  });
  return { prefix, template, sharedUrl: databaseUrl(base, shared) };
}

/** Prepares the templates; the function it answers with removes them and every copy made of them. */
export async function prepareStoreTemplates(
  databaseUrlOfRun: string | undefined,
): Promise<{ templates: StoreTemplates; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'kopek-stores-'));
  const now = Date.now();
  const [pglite, pgTemplates] = await Promise.all([
    embeddedTemplates(dir),
    databaseUrlOfRun ? preparePostgres(databaseUrlOfRun, now) : undefined,
  ]);
  if (databaseUrlOfRun) await dropDatabases(databaseUrlOfRun, await staleDatabases(databaseUrlOfRun, now));
  return {
    templates: { pglite, ...(pgTemplates ? { pg: pgTemplates } : {}) },
    async remove() {
      await rm(dir, { recursive: true, force: true });
      if (databaseUrlOfRun && pgTemplates)
        await dropDatabases(databaseUrlOfRun, await runDatabases(databaseUrlOfRun, `${pgTemplates.prefix}_`));
    },
  };
}
