import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, SRC, sourceFiles } from './sources.js';

/**
 * One owner of a charge (issue 38, item 4): the gateway's money verbs (payment, authorization,
 * capture, void, refund, credit) are sent through the gateway client by src/charging/ only, with the
 * deployment's client (in process or GATEWAY_URL) and a gateway idempotency key; the gateway itself
 * implements them. This reads src/ and names every call of a money verb, or every gateway client
 * made, anywhere else.
 *
 * The checkout API's tries (src/checkout/api/pay.ts) claim and record a try in their own rows, and
 * send it through charging's `send` too, with the client charging hands them (checkoutGateway). The
 * import rule money-verbs-in-charging (.dependency-cruiser.cjs) keeps the gateway's client itself
 * for charging. A place that must stand apart a while is named in NOT_YET, with why.
 */

const MONEY = /\.(?:payment|authorization|capture|void|refund|credit)\(|\bgatewayClient\(/g;
const OWNERS = ['src/charging/', 'src/gateway/'];
const NOT_YET: Record<string, string> = {};

const calls = sourceFiles(SRC).flatMap((path) => {
  const file = relative(ROOT, path).split('\\').join('/');
  if (OWNERS.some((o) => file.startsWith(o))) return [];
  const text = readFileSync(path, 'utf8');
  return [...text.matchAll(MONEY)].map((m) => ({
    file,
    where: `${file}:${text.slice(0, m.index).split('\n').length}: ${m[0]}`,
  }));
});

describe('the money verbs', () => {
  it('are called from src/charging/ only (and the places still named)', () => {
    expect(calls.filter((c) => !(c.file in NOT_YET)).map((c) => c.where)).toEqual([]);
  });

  it('names no place that no longer calls them', () => {
    const callers = new Set(calls.map((c) => c.file));
    expect(Object.keys(NOT_YET).filter((f) => !callers.has(f))).toEqual([]);
  });
});
