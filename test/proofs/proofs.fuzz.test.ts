import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Client, client, type Harness, harness, newShop, type TestShop } from '../harness.js';
import { documentOf, jpeg, parentPayment, pdf, png, proofUrl } from './files.js';

let h: Harness;
let shop: TestShop;
let api: Client;
let parent: string;

beforeAll(async () => {
  h = await harness();
  shop = await newShop(h);
  api = client(h, shop);
  parent = await parentPayment(h, shop);
});

const real = [pdf(), png(), jpeg()].map(documentOf);

/** Values a careless or hostile client might put in any field. */
const anyValue = fc.oneof(
  fc.jsonValue(),
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, 2 ** 53, 2 ** 63, '1e400', '', ' ', '\u0000', '\ud800', 'EUR', 'application/pdf'),
  fc.constantFrom(...real.flatMap((d) => Object.values(d))),
);

/** Mostly the valid value (so requests get as far as the store), else a wrong one, random, or missing. */
const field = <T>(valid: fc.Arbitrary<T>, ...wrong: unknown[]) =>
  fc.option(
    fc.oneof(
      { arbitrary: valid, weight: 8 },
      { arbitrary: wrong.length > 0 ? fc.constantFrom(...wrong) : anyValue, weight: 1 },
      { arbitrary: anyValue, weight: 1 },
    ),
    { nil: undefined, freq: 20 },
  );

/** Bodies shaped like a proof, with the real field names. */
const proofLike = fc.record({
  request: field(
    fc.record({
      amount: field(fc.oneof(fc.constant(1999), fc.integer({ min: 1 })), 0, -1, 1.5, '12a', 2 ** 60),
      currency: field(fc.constantFrom('EUR', 'USD'), 'eur', 'XXX', 'BTC'),
      transaction_reference: field(fc.string({ maxLength: 300 })),
      skip_duplicate_check: field(fc.boolean(), 'true', 1),
      document: field(
        fc.constantFrom(...real).chain((doc) =>
          fc.record({
            content_type: field(fc.constant(doc.content_type), 'image/gif', 'application/pdf'),
            file_name: field(fc.constant(doc.file_name), 'a.pdf', '../a.png', 'a.jpeg', ''),
            file_size: field(fc.constant(doc.file_size), 0, 1, doc.file_size + 1),
            content: field(fc.constant(doc.content), doc.content.slice(1), `${doc.content}=`),
            checksum: field(fc.constantFrom(doc.checksum, doc.checksum.toUpperCase()), 'ab'),
          }),
        ),
        [],
        'x',
      ),
    }),
    [],
    'request',
  ),
});

describe('payment proof: random bodies', () => {
  it('never answer 5xx, and every error is in the {message, errors} shape', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.jsonValue(), proofLike), fc.boolean(), async (body, skip) => {
        const payload =
          skip && typeof body === 'object' && body !== null && 'request' in body
            ? { ...body, request: { ...(body.request as object), skip_duplicate_check: true } }
            : body;
        const res = await api.post(proofUrl(parent), JSON.stringify(payload ?? null));
        expect(res.status).toBeLessThan(500);
        if (res.status >= 400) {
          expect(typeof res.body.message).toBe('string');
          expect(typeof res.body.errors).toBe('object');
        } else {
          expect(res.body.transaction.type).toBe('proof');
        }
      }),
      { numRuns: 300 },
    );
  });
});
