import type { FastifyServerOptions } from 'fastify';
import type { LogLevel } from '../config.js';

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

export function loggerOptions(level: LogLevel): FastifyServerOptions['logger'] {
  return {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
}
