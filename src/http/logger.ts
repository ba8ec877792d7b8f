import { type Logger, type LoggerOptions, pino, stdSerializers, symbols } from 'pino';
import type { LogFormat, LogLevel } from '../config.js';
import { chooseLogFormat, prettyDestination } from './log-format.js';

/** Paths pino blanks out wherever they appear in a logged object: credentials, card data, documents. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  'secret',
  'secret_key',
  'password',
  '*.secret',
  '*.secret_key',
  '*.password',
  'number',
  'verification_value',
  'cvc',
  'content',
  '*.number',
  '*.verification_value',
  '*.cvc',
  '*.content',
  '*.*.number',
  '*.*.verification_value',
  '*.*.cvc',
  '*.*.content',
  'card.number',
  'request.credit_card.number',
  'request.credit_card.verification_value',
  'request.document.content',
];

/**
 * Members of a store's error that repeat the statement's values (PGlite attaches the parameters,
 * PostgreSQL's detail quotes the offending row): a statement may carry card data or documents.
 */
const STATEMENT_VALUES = new Set(['params', 'queryOptions', 'detail', 'parameters', 'values']);
// A run of 12 to 19 digits could be a card number, whatever message quotes it.
const CARD_LIKE = /\d{12,19}/g;
const MAX_DEPTH = 4;

function scrub(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return value.replace(CARD_LIKE, '[redacted]');
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((v) => scrub(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = STATEMENT_VALUES.has(k) ? '[redacted]' : scrub(v, depth + 1);
  }
  return out;
}

/** pino's error serializer, without a statement's values or anything that looks like a card number. */
export function serializeError(err: unknown): unknown {
  if (!(err instanceof Error)) return scrub(err, 0);
  return scrub(stdSerializers.errWithCause(err), 0);
}

/** Every Kopek logger's options: the server's, the CLI's and the tests'. */
export function pinoOptions(level: LogLevel | 'silent'): LoggerOptions {
  return {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: { err: serializeError, error: serializeError },
  };
}

export function loggerOptions(level: LogLevel): LoggerOptions {
  return pinoOptions(level);
}

/**
 * A Kopek logger writing to stdout: JSON lines, or with LOG_FORMAT=pretty (the default on a terminal)
 * one short line per request. Both are pino's output after its redaction. JSON goes out through
 * pino's own asynchronous destination (flush() before printing around it); pretty lines are written
 * at once, in order with whatever else the process prints.
 */
export function stdoutLogger(
  level: LogLevel,
  format: LogFormat | undefined,
  stdout: Pick<NodeJS.WriteStream, 'isTTY' | 'write'> = process.stdout,
): Logger {
  if (chooseLogFormat(format, stdout.isTTY === true) === 'json') return pino(pinoOptions(level));
  return pino(
    pinoOptions(level),
    prettyDestination((text) => stdout.write(text)),
  );
}

/**
 * Prints `text` on stdout after everything `log` has logged so far, through the logger's own
 * destination: pino writes JSON lines asynchronously, so a direct console write would overtake the last of
 * them (the start's "Server listening" lines would land after the banner). A pretty destination
 * passes text that is not JSON through as it is. A logger without a destination of its own prints
 * through `otherwise`.
 */
export function printAfterLog(log: Logger, text: string, otherwise: (text: string) => void): void {
  const destination = (log as unknown as Record<symbol, { write?: (chunk: string) => unknown } | undefined>)[
    symbols.streamSym
  ];
  if (typeof destination?.write === 'function') destination.write(`${text}\n`);
  else otherwise(text);
}
