import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, ROOT, waitFor } from '../foundation/kopek-process.js';

/**
 * The Dockerfile's own steps, run outside Docker (Docker cannot run on the machines that test
 * Kopek): each stage gets a directory standing for its file system, COPY copies from the checkout or
 * from an earlier stage, RUN runs its command with `sh -c` in the stage's WORKDIR, and from `USER`
 * on, RUN, ENTRYPOINT, CMD and HEALTHCHECK run under that user and group, as in the image. The
 * image's Node is this machine's (Node 20 on the machines that test Kopek, which package.json's
 * engines admits), or the one KOPEK_RECIPE_NODE names (a node binary of the base image's major
 * version, to run the steps as the image would). Then the image's ENTRYPOINT and CMD must start
 * Kopek, answer /health, pass the HEALTHCHECK command, create a shop through the entrypoint (`docker
 * compose run --rm kopek shop create …`), and hold no source, tsx or compiler.
 *
 * Run by `npm run test:recipe` (in .ci/run), not by `npm test`: it installs the dependencies twice.
 */

interface Instruction {
  op: string;
  args: string;
}

/** The Dockerfile's instructions, comments dropped and continued lines joined. */
function instructions(text: string): Instruction[] {
  const joined = text.replace(/\\\n/g, ' ');
  return joined
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const [op = '', ...rest] = l.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(' ') };
    });
}

/** `["a", "b"]` (exec form) as an argv; a shell string as `sh -c`. */
function argv(form: string): string[] {
  return form.startsWith('[') ? (JSON.parse(form) as string[]) : ['sh', '-c', form];
}

interface Stage {
  name: string;
  base: string;
  root: string;
  workdir: string;
  env: Record<string, string>;
  user?: { uid: number; gid: number };
  entrypoint?: string[];
  cmd?: string[];
  healthcheck?: string[];
}

const work = mkdtempSync(join(tmpdir(), 'kopek-recipe-'));
// The stages' directories must be reachable by the image's unprivileged user.
chmodSync(work, 0o755);
afterAll(() => rm(work, { recursive: true, force: true }));

/** The path inside a stage's file system for an image path (absolute, or relative to WORKDIR). */
const inside = (stage: Stage, path: string) =>
  path.startsWith('/') ? join(stage.root, path) : join(stage.root, stage.workdir, path);

/** A command as the stage's user would run it: under setpriv once USER is set. */
function asUser(stage: Stage, command: string[]): string[] {
  if (!stage.user) return command;
  const { uid, gid } = stage.user;
  return ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', ...command];
}

/** KOPEK_RECIPE_NODE: the node binary the image's steps run on, instead of this machine's. */
const NODE = process.env.KOPEK_RECIPE_NODE;
const PATH = NODE ? `${dirname(NODE)}:${process.env.PATH}` : process.env.PATH;

function environment(stage: Stage): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH, HOME: stage.user ? work : process.env.HOME };
  // A registry reached through a proxy with a CA of its own (as a docker build would be told).
  for (const name of ['NODE_EXTRA_CA_CERTS', 'npm_config_cafile'])
    if (process.env[name]) env[name] = process.env[name];
  return { ...env, ...stage.env };
}

function build(dockerfile: string): Stage[] {
  const stages: Stage[] = [];
  let stage: Stage | undefined;
  for (const { op, args } of instructions(dockerfile)) {
    if (op === 'FROM') {
      const [base = '', , name = `stage${stages.length}`] = args.split(/\s+/);
      const root = join(work, name);
      mkdirSync(root, { recursive: true, mode: 0o755 });
      stage = { name, base, root, workdir: '/', env: {} };
      stages.push(stage);
      continue;
    }
    if (!stage) throw new Error(`${op} before FROM`);
    switch (op) {
      case 'WORKDIR':
        stage.workdir = args;
        mkdirSync(inside(stage, '.'), { recursive: true, mode: 0o755 });
        break;
      case 'ENV':
        for (const m of args.matchAll(/(\w+)=(?:"([^"]*)"|(\S+))/g))
          stage.env[m[1] as string] = (m[2] ?? m[3]) as string;
        break;
      case 'COPY': {
        const parts = args.split(/\s+/);
        const from = parts.find((p) => p.startsWith('--from='))?.slice('--from='.length);
        const paths = parts.filter((p) => !p.startsWith('--'));
        const dest = paths.pop() as string;
        const source = from ? stages.find((s) => s.name === from) : undefined;
        if (from && !source) throw new Error(`COPY --from=${from}: no such stage`);
        for (const p of paths) {
          const src = source ? inside(source, p) : join(ROOT, p);
          const target = dest.endsWith('/') ? join(inside(stage, dest), basename(p)) : inside(stage, dest);
          cpSync(src, target, { recursive: true });
        }
        break;
      }
      case 'RUN':
        execFileSync(asUser(stage, argv(args))[0] as string, asUser(stage, argv(args)).slice(1), {
          cwd: inside(stage, '.'),
          env: environment(stage),
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        break;
      case 'USER': {
        const [uid, gid] = args.split(':').map(Number);
        if (!Number.isInteger(uid) || !Number.isInteger(gid))
          throw new Error(`USER ${args}: keep it numeric`);
        stage.user = { uid: uid as number, gid: gid as number };
        break;
      }
      case 'ENTRYPOINT':
        stage.entrypoint = argv(args);
        break;
      case 'CMD':
        stage.cmd = argv(args);
        break;
      case 'HEALTHCHECK':
        stage.healthcheck = argv(args.slice(args.indexOf('CMD') + 'CMD'.length).trim());
        break;
      case 'EXPOSE':
      case 'VOLUME':
        break;
      default:
        throw new Error(`the recipe test does not know ${op}`);
    }
  }
  return stages;
}

describe('the Dockerfile, its steps run outside Docker', () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

  it('builds an image of dist/ and production dependencies that starts as an unprivileged user and answers', async () => {
    const stages = build(dockerfile);
    const image = stages.at(-1) as Stage;
    expect(stages.map((s) => s.name)).toEqual(['build', 'runtime']);
    // The base image's Node is the one these steps ran on, when KOPEK_RECIPE_NODE gives it; else
    // this machine's, which Kopek supports as well (package.json engines).
    const base = Number(/^node:(\d+)-/.exec(image.base)?.[1]);
    const ran = execFileSync('node', ['-p', 'process.versions.node'], {
      env: { PATH },
      encoding: 'utf8',
    }).trim();
    if (NODE) expect(Number(ran.split('.')[0])).toBe(base);
    const engines = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).engines.node as string;
    expect(Number(ran.split('.')[0])).toBeGreaterThanOrEqual(Number(/\d+/.exec(engines)?.[0]));
    expect(base).toBeGreaterThanOrEqual(Number(/\d+/.exec(engines)?.[0]));

    const app = inside(image, '.');
    expect(existsSync(join(app, 'dist', 'cli.js'))).toBe(true);
    expect(existsSync(join(app, 'dist', 'db', 'migrations'))).toBe(true);
    for (const absent of [
      'src',
      'node_modules/tsx',
      'node_modules/typescript',
      'node_modules/vitest',
      'node_modules/esbuild',
    ]) {
      expect(existsSync(join(app, absent)), absent).toBe(false);
    }
    expect(image.user?.uid).not.toBe(0);
    expect(statSync(join(app, 'data')).uid).toBe(image.user?.uid);

    const port = await freePort();
    const env = { ...environment(image), PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
    // `docker run IMAGE`: the entrypoint with the default command.
    const entrypoint = image.entrypoint ?? [];
    const command = asUser(image, [...entrypoint, ...(image.cmd ?? [])]);
    const server = spawn(command[0] as string, command.slice(1), {
      cwd: app,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    server.stdout.on('data', (d) => {
      output += d;
    });
    server.stderr.on('data', (d) => {
      output += d;
    });
    try {
      await waitFor('the image to answer /health', async () => {
        if (server.exitCode !== null) throw new Error(`the server exited: ${output}`);
        return fetch(`http://127.0.0.1:${port}/health`).then(
          (r) => r.ok,
          () => false,
        );
      });
      expect(output).toContain('Kopek is running');
      // The HEALTHCHECK command itself, as Docker would run it inside the container.
      const check = asUser(image, image.healthcheck as string[]);
      execFileSync(check[0] as string, check.slice(1), { cwd: app, env, stdio: 'pipe' });
      // `docker compose run --rm kopek shop create …` (here on the embedded store: the command
      // reaches the running server through its control socket, as `docker exec` would).
      const create = asUser(image, [...entrypoint, 'shop', 'create', '--name', 'My shop']);
      const created = execFileSync(create[0] as string, create.slice(1), { cwd: app, env, encoding: 'utf8' });
      expect(created).toMatch(/Shop id: {5}2\nSecret key: {2}[0-9a-f]{64}/);
      // The embedded store and its key were written by the image's user, for it alone.
      expect(statSync(join(app, 'data', 'master.key')).uid).toBe(image.user?.uid);
    } finally {
      // A server that exited already (it could not start) has no exit left to wait for.
      if (server.exitCode === null && server.signalCode === null) {
        const exited = new Promise((r) => server.once('exit', r));
        server.kill('SIGTERM');
        await exited;
      }
    }
  });
});
