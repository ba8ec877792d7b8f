import { describe, expect, it } from 'vitest';
import { chooseLogFormat, PrettyLog } from '../../src/http/log-format.js';
import { stdoutLogger } from '../../src/http/logger.js';

/**
 * The log on a terminal (LOG_FORMAT=pretty, the default there): one short line per request and one
 * per other entry, made from pino's redacted JSON, so card data and credentials stay out of it as
 * they stay out of the JSON. Started for real: logs-on-a-terminal.test.ts.
 */

const PAN = '4200000000000000';
const SECRET = 'f3'.repeat(32);

/** A logger in the pretty format whose stdout is a terminal that the test reads. */
function terminal() {
  let text = '';
  const stdout = {
    isTTY: true,
    write: (chunk: string) => {
      text += chunk;
      return true;
    },
  };
  return { log: stdoutLogger('info', undefined, stdout), text: () => text };
}

describe('LOG_FORMAT', () => {
  it('is pretty on a terminal and JSON elsewhere, unless set', () => {
    expect(chooseLogFormat(undefined, true)).toBe('pretty');
    expect(chooseLogFormat(undefined, false)).toBe('json');
    expect(chooseLogFormat('json', true)).toBe('json');
    expect(chooseLogFormat('pretty', false)).toBe('pretty');
  });
});

describe('the pretty log', () => {
  it('joins a request’s two lines into one', () => {
    const pretty = new PrettyLog();
    const time = Date.UTC(2026, 10, 28, 14, 5, 9, 250);
    const incoming = JSON.stringify({
      level: 30,
      time,
      pid: 1,
      hostname: 'h',
      reqId: 'r-1',
      req: { method: 'GET', url: '/health', host: 'localhost', remoteAddress: '127.0.0.1', remotePort: 5 },
      msg: 'incoming request',
    });
    const completed = JSON.stringify({
      level: 30,
      time: time + 3,
      pid: 1,
      hostname: 'h',
      reqId: 'r-1',
      res: { statusCode: 200 },
      responseTime: 2.6,
      msg: 'request completed',
    });
    expect(pretty.format(`${incoming}\n`)).toBe('');
    expect(pretty.format(`${completed}\n`)).toBe('14:05:09  GET /health 200 3 ms\n');
  });

  it('shows a warning’s fields, and an error with its stack under it', () => {
    const pretty = new PrettyLog();
    const warn = JSON.stringify({
      level: 40,
      time: 0,
      msg: 'generated a master key',
      file: '/srv/data/master.key',
    });
    expect(pretty.format(warn)).toBe('00:00:00  WARN  generated a master key  file=/srv/data/master.key\n');
    const error = JSON.stringify({
      level: 50,
      time: 0,
      err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at f (a.js:1:2)' },
      msg: 'unhandled error',
    });
    expect(pretty.format(error)).toBe(
      '00:00:00  ERROR unhandled error  err="Error: boom"\n    at f (a.js:1:2)\n',
    );
    expect(pretty.format('not json')).toBe('not json\n');
  });

  it('keeps card data and credentials out, as the JSON does', () => {
    const { log, text } = terminal();
    log.info(
      {
        req: { headers: { authorization: `Basic ${Buffer.from(`1:${SECRET}`).toString('base64')}` } },
        request: { credit_card: { number: PAN, verification_value: '987' } },
        secret_key: SECRET,
      },
      'card seen',
    );
    log.error({ err: new Error(`declined card ${PAN}`) }, 'a charge failed');
    const out = text();
    expect(out).toContain('card seen');
    expect(out).toContain('[redacted]');
    expect(out).toContain('a charge failed');
    expect(out).not.toContain(PAN);
    expect(out).not.toContain(SECRET);
    expect(out).not.toContain('987');
    expect(out).not.toContain('{"level"');
  });
});
