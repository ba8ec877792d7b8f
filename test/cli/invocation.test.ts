import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { cliCommand } from '../../src/cli/invocation.js';
import { loadConfig } from '../../src/config.js';
import { embeddedEnv, ROOT } from '../foundation/kopek-process.js';

/**
 * What Kopek tells the operator to run next (on a store without shops: how to create one) is the
 * command that works where they are: `npx kopek` in a checkout, `kopek` from the PATH, `node
 * dist/cli.js` beside a built dist/, and in containers what KOPEK_CLI says (compose.yaml's
 * `docker compose run --rm kopek`).
 */

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the kopek command, as the operator types it', () => {
  const none = { cliCommand: undefined };
  const cwd = '/srv/kopek';

  it('follows how this process was started', () => {
    expect(
      cliCommand(none, { env: { npm_lifecycle_event: 'start' }, script: `${cwd}/bin/kopek.js`, cwd }),
    ).toBe('npx kopek');
    expect(cliCommand(none, { env: { npm_command: 'exec' }, script: `${cwd}/bin/kopek.js`, cwd })).toBe(
      'npx kopek',
    );
    expect(cliCommand(none, { env: {}, script: '/usr/local/bin/kopek', cwd })).toBe('kopek');
    expect(cliCommand(none, { env: {}, script: `${cwd}/dist/cli.js`, cwd })).toBe('node dist/cli.js');
    expect(cliCommand(none, { env: {}, script: '/opt/kopek app/dist/cli.js', cwd })).toBe(
      "node '/opt/kopek app/dist/cli.js'",
    );
  });

  it('is KOPEK_CLI when set, wherever it runs', () => {
    const config = loadConfig({ KOPEK_CLI: 'docker compose run --rm kopek' });
    expect(
      cliCommand(config, { env: { npm_command: 'exec' }, script: '/app/bin/kopek.js', cwd: '/app' }),
    ).toBe('docker compose run --rm kopek');
    expect(() => loadConfig({ KOPEK_CLI: 'kopek\nrm -rf /' })).toThrow(/KOPEK_CLI must be one line/);
  });
});

describe('on a store without shops, the command printed', { timeout: 120_000 }, () => {
  const run = promisify(execFile);
  /** `shop list` on an empty DATA_DIR of its own, started as `command args`. */
  async function emptyList(command: string, args: string[], extra: Record<string, string> = {}) {
    const dir = mkdtempSync(join(tmpdir(), 'kopek-invocation-'));
    dirs.push(dir);
    const env = { ...embeddedEnv(join(dir, 'data')), ...extra };
    for (const name of Object.keys(env)) if (name.startsWith('npm_')) delete env[name];
    const { stdout } = await run(command, [...args, 'shop', 'list'], { cwd: ROOT, env });
    return stdout;
  }

  it('is `npx kopek …` in a checkout, through npx', async () => {
    expect(await emptyList('npx', ['kopek'])).toContain("\n  npx kopek shop create --name 'My shop'");
  });

  it('is `node dist/cli.js …` when node runs the built file', async () => {
    expect(await emptyList('node', ['dist/cli.js'])).toContain(
      "\n  node dist/cli.js shop create --name 'My shop'",
    );
  });

  it('is what KOPEK_CLI says in a container', async () => {
    const out = await emptyList('node', ['dist/cli.js'], { KOPEK_CLI: 'docker compose run --rm kopek' });
    expect(out).toContain("\n  docker compose run --rm kopek shop create --name 'My shop'");
  });
});
