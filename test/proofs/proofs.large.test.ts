import { beforeAll, describe, expect, it } from 'vitest';
import { decodeStrictBase64 } from '../../src/proofs/document.js';
import { type Client, client, type Harness, harness, newShop, type TestShop } from '../harness.js';
import { parentPayment, proofBody, proofUrl, type TestFile } from './files.js';

/**
 * Documents near the default 10 MiB limit: checking their base64 must take time in proportion to
 * their length and never exhaust the stack, whatever the text holds.
 */

let h: Harness;
let shop: TestShop;
let api: Client;

beforeAll(async () => {
  h = await harness();
  shop = await newShop(h);
  api = client(h, shop);
});

const MIB = 1024 * 1024;

/** A PDF of `size` bytes whose padding varies, so its base64 is not one short pattern repeated. */
function largePdf(size: number): TestFile {
  const bytes = Buffer.alloc(size);
  bytes.write('%PDF-1.4\n%', 'latin1');
  for (let i = 10; i < size - 7; i++) bytes[i] = 0x20 + ((i * 7919) % 95);
  bytes.write('\n%%EOF\n', size - 7, 'latin1');
  return { bytes, type: 'application/pdf', name: 'large.pdf' };
}

const notBase64 = {
  document: { content: ['must be base64 (A-Z, a-z, 0-9, + and /, padded with =, no line breaks)'] },
};

describe('payment proof: documents of several MiB', { timeout: 120_000 }, () => {
  const file = largePdf(9 * MIB);
  const content = file.bytes.toString('base64');

  it('accepts a 9 MiB document and gives it back unchanged', async () => {
    const res = await api.post(proofUrl(await parentPayment(h, shop)), proofBody(file));
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    const download = await h.app.inject({
      method: 'GET',
      url: `/alt/transactions/${res.body.transaction.uid}/proof/document`,
      headers: { authorization: shop.auth },
    });
    expect(download.statusCode).toBe(200);
    expect(download.rawPayload.equals(file.bytes)).toBe(true);
  });

  it.each([
    ['a character outside the alphabet near its end', `${content.slice(0, -5)}!${content.slice(-4)}`],
    ['padding in the middle', `${content.slice(0, 8 * MIB)}QQ==${content.slice(8 * MIB + 4)}`],
    ['line breaks in the middle', `${content.slice(0, 8 * MIB)}\r\n\r\n${content.slice(8 * MIB + 4)}`],
  ])('refuses a 9 MiB document with %s as 422, not 500', async (_case, broken) => {
    const res = await api.post(
      proofUrl(await parentPayment(h, shop)),
      proofBody(file, {}, { content: broken }),
    );
    expect(res.status, res.text.slice(0, 300)).toBe(422);
    expect(res.body.errors).toMatchObject(notBase64);
  });
});

describe('decodeStrictBase64', () => {
  it('decodes canonical base64 of any length in linear time, without recursion', () => {
    const bytes = Buffer.alloc(12 * MIB, 0xa5);
    expect(decodeStrictBase64(bytes.toString('base64'))?.equals(bytes)).toBe(true);
    expect(decodeStrictBase64('A'.repeat(16 * MIB))).toHaveLength(12 * MIB);
    expect(decodeStrictBase64(`${'A'.repeat(16 * MIB)}AA!=`)).toBeUndefined();
  });

  it.each([
    ['', 0],
    ['QQ==', 1],
    ['QUI=', 2],
    ['QUJD', 3],
    ['+/+/', 3],
  ])('decodes %j to %d bytes', (text, length) => {
    expect(decodeStrictBase64(text)).toHaveLength(length);
  });

  it.each([
    'QQ',
    'QQ=',
    'Q===',
    '====',
    'QR==',
    'QQ==QUJD',
    'QU I',
    'QUJD\n',
    '-_-_',
    'QUJ\u0000',
    'QUJ\u00e9',
  ])('refuses %j', (text) => {
    expect(decodeStrictBase64(text)).toBeUndefined();
  });
});
