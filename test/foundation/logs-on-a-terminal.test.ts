import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import {
  alive,
  cleanUp,
  EMBEDDED_ONLY,
  embeddedEnv,
  freePort,
  lockOf,
  type Started,
  seededDataDir,
  start,
  waitFor,
} from './kopek-process.js';

/**
 * `npm start` as a person sees it on a terminal (a pseudo-terminal from util-linux's `script`): the
 * banner whole, then one short line per request, and no JSON; JSON when stdout is not a terminal,
 * with nothing the start logged printed after the banner (LOG_FORMAT=json on a terminal:
 * log-format.test.ts).
 */

const dirs: string[] = [];
afterAll(() => {
  cleanUp();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** `npm start` on a seeded store of its own, on a terminal or not; answers once it has served /health. */
async function npmStart(terminal: boolean, extra: Record<string, string> = {}) {
  const dir = await seededDataDir('kopek-logs-');
  dirs.push(dir);
  const port = await freePort();
  const env = { ...embeddedEnv(dir, port), LOG_LEVEL: 'info', ...extra };
  const s: Started = terminal
    ? start('script', ['--quiet', '--flush', '--return', '--command', 'npm start', '/dev/null'], env)
    : start('npm', ['start'], env);
  // The banner's last line, on this store's first start: the sandbox shop's curl.
  await s.untilOutput('the banner', (o) => o.includes('/customers -d '));
  const res = await fetch(`http://127.0.0.1:${port}/health`);
  expect(res.status).toBe(200);
  await s.untilOutput('the request’s log line', (o) =>
    terminal && extra.LOG_FORMAT !== 'json'
      ? /GET \/health 200 \d+ ms/.test(o)
      : o.includes('"request completed"'),
  );
  const server = lockOf(dir)?.pid as number;
  process.kill(server, 'SIGTERM');
  await waitFor('the server to stop', () => !alive(server), 30_000);
  await s.exited;
  return s.output().replace(/\r\n/g, '\n');
}

// The two start at once: one after the other they would wait for each other's start-up.
describe('npm start', { timeout: 120_000, concurrent: true, ...EMBEDDED_ONLY }, () => {
  it('on a terminal prints its banner whole and one short line per request, no JSON', async () => {
    const out = await npmStart(true);
    expect(out).toContain('Kopek is running');
    const json = out.split('\n').filter((line) => line.trimStart().startsWith('{'));
    expect(json).toEqual([]);
    expect(out).toMatch(/^\d\d:\d\d:\d\d {2}GET \/health 200 \d+ ms$/m);
    expect(out).toMatch(/^\d\d:\d\d:\d\d {2}INFO {2}Server listening at http:\/\/127\.0\.0\.1:\d+$/m);
    // What the start logged comes before the banner, which nothing interrupts.
    expect(out.indexOf('Server listening')).toBeLessThan(out.indexOf('Kopek is running'));
  });

  it('logs JSON when stdout is not a terminal, every start-up line before the banner', async () => {
    // On every address, as `npm start` listens by default: one "Server listening" line each.
    const out = await npmStart(false, { HOST: '0.0.0.0' });
    const lines = out.split('\n');
    const banner = lines.findIndex((line) => line.startsWith('Kopek is running'));
    const json = lines.map((line, i) => [line, i] as const).filter(([line]) => line.startsWith('{'));
    expect(json.length).toBeGreaterThan(0);
    for (const [line] of json) JSON.parse(line);
    // What the start logs: the key it generated, the migrations, where it listens (one line per
    // address, the last of them written after the banner before).
    const START_UP = /^(Server listening at|applied migrations|generated a master key)/;
    const startUp = json.filter(([line]) => START_UP.test(JSON.parse(line).msg));
    expect(
      startUp.filter(([line]) => JSON.parse(line).msg.startsWith('Server listening')).length,
    ).toBeGreaterThan(1);
    expect(startUp.map(([line, i]) => [JSON.parse(line).msg, i < banner])).toEqual(
      startUp.map(([line]) => [JSON.parse(line).msg, true]),
    );
  });
});
