/**
 * The log as a person reads it on a terminal: one short line per request (`12:04:31  GET /health 200
 * 3 ms`) and one line per other entry (`12:04:29  WARN  generated a master key…  file=…`). It is made
 * from the JSON line pino has written already, so whatever pino redacts (card data, credentials) is
 * redacted here too: this formatter never sees the values it left out.
 */
import type { LogFormat } from '../config.js';

/** LOG_FORMAT as given, or unset: pretty on a terminal, JSON for anything that reads stdout. */
export function chooseLogFormat(format: LogFormat | undefined, stdoutIsTty: boolean): LogFormat {
  return format ?? (stdoutIsTty ? 'pretty' : 'json');
}

const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};
/** Fields every line has, shown in its own way or not at all. */
const SHOWN_APART = new Set([
  'level',
  'time',
  'pid',
  'hostname',
  'msg',
  'reqId',
  'req',
  'res',
  'responseTime',
]);
const MAX_VALUE = 200;
/** Requests whose "incoming" line was seen and whose "completed" line was not, kept at most. */
const MAX_OPEN = 1000;

type Entry = Record<string, unknown>;

/** `hh:mm:ss` (UTC) of pino's time, in milliseconds since the epoch. */
function clockTime(ms: unknown): string {
  if (typeof ms !== 'number') return '--:--:--';
  const s = Math.floor(ms / 1000) % 86_400;
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(Math.floor(s / 3600))}:${two(Math.floor(s / 60) % 60)}:${two(s % 60)}`;
}

function shortValue(value: unknown): string {
  const text = typeof value === 'string' && !/[\s"]/.test(value) ? value : JSON.stringify(value);
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE)}…` : text;
}

function errorLines(err: unknown): { summary: string; stack: string[] } | undefined {
  if (err === null || typeof err !== 'object') return undefined;
  const { type, message, stack } = err as { type?: unknown; message?: unknown; stack?: unknown };
  const summary = `${typeof type === 'string' ? `${type}: ` : ''}${String(message ?? '')}`;
  const frames =
    typeof stack === 'string'
      ? stack
          .split('\n')
          .slice(1)
          .map((l) => `    ${l.trim()}`)
      : [];
  return { summary, stack: frames };
}

/** Turns pino's JSON lines into lines for a person; keeps what it needs to join a request's two lines. */
export class PrettyLog {
  private readonly open = new Map<string, string>();

  /** The text to print for one JSON line of pino's (empty: nothing, as for an "incoming request"). */
  format(line: string): string {
    let entry: Entry;
    try {
      entry = JSON.parse(line) as Entry;
    } catch {
      return line.endsWith('\n') ? line : `${line}\n`;
    }
    const time = clockTime(entry.time);
    const reqId = typeof entry.reqId === 'string' ? entry.reqId : undefined;
    const req = entry.req as { method?: string; url?: string } | undefined;
    const res = entry.res as { statusCode?: number } | undefined;
    const level = typeof entry.level === 'number' ? entry.level : 30;
    if (reqId && req?.method && entry.msg === 'incoming request') {
      if (this.open.size >= MAX_OPEN) this.open.delete(this.open.keys().next().value as string);
      this.open.set(reqId, `${req.method} ${req.url ?? ''}`);
      if (level <= 30) return '';
    }
    const request = reqId ? this.open.get(reqId) : undefined;
    if (res?.statusCode !== undefined && entry.msg === 'request completed') {
      if (reqId) this.open.delete(reqId);
      const took = typeof entry.responseTime === 'number' ? ` ${Math.round(entry.responseTime)} ms` : '';
      return `${time}  ${request ?? `request ${reqId ?? ''}`} ${res.statusCode}${took}\n`;
    }
    const parts = [`${time}  ${(LEVELS[level] ?? String(level)).padEnd(5)} ${String(entry.msg ?? '')}`];
    const fields: string[] = [];
    let stack: string[] = [];
    for (const [key, value] of Object.entries(entry)) {
      if (SHOWN_APART.has(key) || value === undefined) continue;
      const error = key === 'err' || key === 'error' ? errorLines(value) : undefined;
      if (error) {
        fields.push(`${key}=${shortValue(error.summary)}`);
        stack = error.stack;
      } else fields.push(`${key}=${shortValue(value)}`);
    }
    if (request) fields.push(`(${request})`);
    if (fields.length > 0) parts.push(fields.join(' '));
    return `${[parts.join('  '), ...stack].join('\n')}\n`;
  }
}

/** A pino destination that prints the pretty lines through `out`, at once (so they keep their order). */
export function prettyDestination(out: (text: string) => void): { write(line: string): void } {
  const pretty = new PrettyLog();
  return {
    write(line: string) {
      const text = pretty.format(line);
      if (text !== '') out(text);
    },
  };
}
