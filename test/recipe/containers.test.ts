import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config.js';
import { ROOT } from '../foundation/kopek-process.js';
import { freshPostgresUrl } from '../fresh-store.js';

/**
 * compose.yaml and the Dockerfile, checked without Docker (the machines that test Kopek have none;
 * their steps run in test/recipe/dockerfile.recipe.ts): compose's own interpolation of `${…}` is
 * done here as compose does it, from the .env the docs tell the operator to create once.
 *
 * - The master key and the database password come only from .env: without it compose refuses to
 *   start, in one line that says what to do; nothing secret is written in compose.yaml.
 * - The first shop: `docker compose run --rm kopek shop create …` runs the CLI through the image's
 *   entrypoint, as compose would (on PostgreSQL, the migrate service first).
 * - A supported LTS Node as the base image, and no anonymous volume.
 * - Every variable the two files name is one the docs list.
 */

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const OPERATIONS = read('docs/operations.md');
const README = read('README.md');
const DOCKERFILE = read('Dockerfile');
const COMPOSE_TEXT = read('compose.yaml');

type Env = Record<string, string | undefined>;

/**
 * Compose's interpolation: `$$`, `$VAR`, `${VAR}`, `${VAR:-default}`, `${VAR-default}`,
 * `${VAR:?message}`, `${VAR?message}`, `${VAR:+other}`, `${VAR+other}`. A required variable that is
 * missing stops it with compose's error: `required variable VAR is missing a value: message`.
 */
function interpolate(text: string, env: Env): string {
  return text.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (match, braced?: string, op?: string, arg?: string, bare?: string) => {
      if (match === '$$') return '$';
      const name = (braced ?? bare) as string;
      const value = env[name];
      const unset = op?.startsWith(':') ? value === undefined || value === '' : value === undefined;
      switch (op?.replace(':', '')) {
        case '-':
          return unset ? (arg ?? '') : (value as string);
        case '?':
          if (unset) throw new Error(`required variable ${name} is missing a value: ${arg}`);
          return value as string;
        case '+':
          return unset ? '' : (arg ?? '');
        default:
          return value ?? '';
      }
    },
  );
}

/** The variables compose interpolates from the environment or .env. */
const interpolated = [
  ...COMPOSE_TEXT.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)|\$([A-Za-z_][A-Za-z0-9_]*)/g),
].map((m) => (m[1] ?? m[2]) as string);

/** A .env file as compose reads it: `NAME=value` lines, comments and blank lines skipped. */
function dotenv(text: string): Env {
  const env: Env = {};
  for (const line of text.split('\n')) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (m && !line.trimStart().startsWith('#'))
      env[m[1] as string] = (m[2] as string).replace(/^(['"])(.*)\1$/, '$2');
  }
  return env;
}

interface Service {
  build?: string;
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  profiles?: string[];
  depends_on?: Record<string, { condition: string }>;
}
interface ComposeFile {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

/** compose.yaml as compose sees it with `env` (its shell and .env together). */
const compose = (env: Env) => parse(interpolate(COMPOSE_TEXT, env), { merge: true }) as ComposeFile;
/** The services that run Kopek (built from this directory). */
const kopekServices = (file: ComposeFile) => Object.entries(file.services).filter(([, s]) => s.build === '.');

/** The Dockerfile's instructions, continued lines joined. */
const instructions = DOCKERFILE.replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'));
const instruction = (op: string) =>
  instructions.filter((l) => l.startsWith(`${op} `)).map((l) => l.slice(op.length + 1));

/** The docs' one block that creates .env. */
function envBlock(): string {
  const blocks = [...OPERATIONS.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);
  const creating = blocks.filter((b) => /> \.env/.test(b));
  expect(creating).toHaveLength(1);
  return (creating[0] as string)
    .split('\n')
    .filter((l) => !/^\s*(#|$)/.test(l))
    .join('\n');
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A directory standing for the operator's checkout, with the .env the docs' command created there. */
function createdEnv(): { dir: string; env: Env } {
  const dir = mkdtempSync(join(tmpdir(), 'kopek-compose-'));
  dirs.push(dir);
  execFileSync('sh', ['-c', envBlock()], { cwd: dir, stdio: 'pipe' });
  return { dir, env: dotenv(readFileSync(join(dir, '.env'), 'utf8')) };
}

describe('the master key and the database password in containers', () => {
  it('come from a .env that the docs create once, for the owner alone, and never overwrite', () => {
    const { dir, env } = createdEnv();
    expect(env.KOPEK_MASTER_KEY).toMatch(/^[0-9a-f]{64}$/);
    expect(env.POSTGRES_PASSWORD).toMatch(/^[0-9a-f]{32,}$/);
    expect(statSync(join(dir, '.env')).mode & 0o077).toBe(0);
    // Run again, it keeps the key that sealed the data: it refuses instead of writing a new one.
    const before = readFileSync(join(dir, '.env'), 'utf8');
    expect(() => execFileSync('sh', ['-c', envBlock()], { cwd: dir, stdio: 'pipe' })).toThrow();
    expect(readFileSync(join(dir, '.env'), 'utf8')).toBe(before);
    // README gives the same command.
    expect(README).toContain(envBlock());
  });

  it('are required: without them compose stops, in one line that says to create .env', () => {
    const { env } = createdEnv();
    for (const name of ['KOPEK_MASTER_KEY', 'POSTGRES_PASSWORD']) {
      const without = { ...env, [name]: undefined };
      let message = '';
      try {
        compose(without);
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(
        new RegExp(`^required variable ${name} is missing a value: ${name} is not set`),
      );
      expect(message).toContain('create .env once');
      expect(message).not.toContain('\n');
    }
  });

  it('reach every Kopek service from .env, as a configuration Kopek accepts', () => {
    const { env } = createdEnv();
    const file = compose(env);
    const services = kopekServices(file);
    expect(services.map(([name]) => name).sort()).toEqual(['kopek', 'kopek-1', 'kopek-2', 'migrate']);
    for (const [name, service] of services) {
      const environment = service.environment ?? {};
      expect(environment.KOPEK_MASTER_KEY, name).toBe(env.KOPEK_MASTER_KEY);
      expect(new URL(environment.DATABASE_URL as string).password, name).toBe(env.POSTGRES_PASSWORD);
      expect(() => loadConfig(environment), name).not.toThrow();
    }
    expect(file.services.postgres?.environment?.POSTGRES_PASSWORD).toBe(env.POSTGRES_PASSWORD);
  });

  it('are written nowhere in compose.yaml or the docs’ commands', () => {
    const file = parse(COMPOSE_TEXT, { merge: true }) as ComposeFile;
    const postgres = file.services.postgres?.environment ?? {};
    expect(postgres.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:\?/);
    for (const [name, service] of kopekServices(file)) {
      const url = service.environment?.DATABASE_URL ?? '';
      expect(url, name).toMatch(/^postgres:\/\/kopek:\$\{POSTGRES_PASSWORD:\?[^}]*\}@/);
      expect(service.environment?.KOPEK_MASTER_KEY, name).toMatch(/^\$\{KOPEK_MASTER_KEY:\?/);
    }
    // The key made afresh on each start, which the docs used to say: the data would not open again.
    for (const doc of [OPERATIONS, README])
      expect(doc).not.toMatch(/KOPEK_MASTER_KEY=\$\(openssl[^)]*\)\s+docker/);
    expect(OPERATIONS).toMatch(/back (it|\.env) up/i);
    // .env stays out of git and out of the image's build context.
    expect(read('.gitignore').split('\n')).toContain('.env');
    expect(read('.dockerignore').split('\n')).toContain('.env');
  });
});

describe('the first shop in containers', () => {
  it('is `docker compose run --rm kopek shop create …`, the CLI through the image’s entrypoint', () => {
    const file = compose(createdEnv().env);
    const cli = file.services.kopek as Service;
    // Not started by `up`; its arguments are the CLI's, after the migration.
    expect(cli.profiles).toEqual(['cli']);
    expect(cli.command).toBeUndefined();
    expect(cli.depends_on).toEqual({ migrate: { condition: 'service_completed_successfully' } });
    expect(cli.environment?.KOPEK_CLI).toBe('docker compose run --rm kopek');
    expect(file.services.migrate?.command).toEqual(['migrate']);
    const entrypoint = JSON.parse(instruction('ENTRYPOINT')[0] as string) as string[];
    expect(entrypoint.at(-1)).toBe('bin/kopek.js');
    expect(JSON.parse(instruction('CMD')[0] as string)).toEqual(['serve']);
    for (const doc of [OPERATIONS, README])
      expect(doc).toContain("docker compose run --rm kopek shop create --name 'My shop'");
  });

  it.skipIf(!process.env.DATABASE_URL)(
    'runs as compose runs it: the migrate service, then the kopek service’s shop create',
    { timeout: 120_000 },
    async () => {
      const run = promisify(execFile);
      const { env } = createdEnv();
      const file = compose(env);
      const entrypoint = JSON.parse(instruction('ENTRYPOINT')[0] as string) as string[];
      // The database compose's postgres service would be: an empty one of this test's own.
      const database = await freshPostgresUrl({ migrated: false });
      const serviceEnv = (name: string) => ({
        PATH: process.env.PATH,
        ...file.services[name]?.environment,
        DATABASE_URL: database,
      });
      const [node, ...args] = entrypoint as [string, ...string[]];
      const migrated = await run(node, [...args, ...(file.services.migrate?.command ?? [])], {
        cwd: ROOT,
        env: serviceEnv('migrate'),
      });
      expect(migrated.stdout).toContain('Applied: 001_foundation');
      const empty = await run(node, [...args, 'shop', 'list'], { cwd: ROOT, env: serviceEnv('kopek') });
      expect(empty.stdout).toContain("\n  docker compose run --rm kopek shop create --name 'My shop'");
      const created = await run(node, [...args, 'shop', 'create', '--name', 'My shop'], {
        cwd: ROOT,
        env: serviceEnv('kopek'),
      });
      expect(created.stdout).toMatch(/Shop id: {5}1\nSecret key: {2}[0-9a-f]{64}/);
    },
  );
});

describe('the image', () => {
  it('is built on a Node LTS line still supported, which README names', () => {
    // The end of each LTS line's support (nodejs.org's release schedule).
    const END_OF_LIFE: Record<string, string> = { '22': '2027-04-30', '24': '2028-04-30' };
    const bases = instruction('FROM').map((from) => from.split(/\s+/)[0] as string);
    expect(bases.length).toBe(2);
    for (const base of bases) {
      const major = /^node:(\d+)-[a-z]+-slim$/.exec(base)?.[1] as string;
      expect(END_OF_LIFE[major], base).toBeDefined();
      expect((END_OF_LIFE[major] as string) > new Date().toISOString().slice(0, 10), base).toBe(true);
      expect(README).toContain(`\`${base}\``);
    }
    expect(README).toMatch(/Node\.js 20, 22 and 24/);
  });

  it('makes no anonymous volume: none in the Dockerfile, only named ones in compose.yaml', () => {
    expect(instruction('VOLUME')).toEqual([]);
    const file = compose(createdEnv().env);
    const named = Object.keys(file.volumes ?? {});
    for (const [name, service] of Object.entries(file.services)) {
      for (const volume of service.volumes ?? []) {
        expect(named, `${name}: ${volume}`).toContain(volume.split(':')[0]);
      }
    }
  });
});

describe('the variables compose.yaml and the Dockerfile name', () => {
  // The Configuration table of docs/operations.md: every variable Kopek reads.
  const configuration = OPERATIONS.slice(OPERATIONS.indexOf('\n## Configuration\n'));
  const table = [
    ...configuration.slice(0, configuration.indexOf('\n## ', 5)).matchAll(/^\| `([A-Z_]+)`/gm),
  ].map((m) => m[1] as string);
  const containers = OPERATIONS.slice(OPERATIONS.indexOf('\n### Containers\n'));
  const containersSection = containers.slice(0, containers.indexOf('\n## ', 5));
  const reads = [...read('src/config.ts').matchAll(/\b(?:value|int|url)\(\s*'([A-Z_]+)'/g)].map(
    (m) => m[1] as string,
  );

  it('the Configuration table lists exactly what src/config.ts reads', () => {
    expect([...new Set(table)].sort()).toEqual([...new Set(reads)].sort());
  });

  it('are each listed in the docs: Kopek’s in the Configuration table, the others under Containers', () => {
    const file = compose(createdEnv().env);
    const kopeks = kopekServices(file).flatMap(([, s]) => Object.keys(s.environment ?? {}));
    const dockerfile = instruction('ENV').flatMap((args) =>
      [...args.matchAll(/(\w+)=/g)].map((m) => m[1] as string),
    );
    const others = Object.entries(file.services)
      .filter(([, s]) => s.build !== '.')
      .flatMap(([, s]) => Object.keys(s.environment ?? {}));
    const unlisted = [...new Set([...kopeks, ...dockerfile, ...others, ...interpolated])].filter(
      (name) => !table.includes(name) && !containersSection.includes(`\`${name}\``),
    );
    expect(unlisted).toEqual([]);
    // What Kopek's services are given is Kopek's configuration.
    expect(kopeks.filter((name) => !table.includes(name))).toEqual([]);
    // What compose reads from .env is what the docs' .env section names.
    for (const name of interpolated) expect(containersSection, name).toContain(`\`${name}\``);
  });
});
