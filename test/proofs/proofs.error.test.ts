import { beforeAll, describe, expect, it } from 'vitest';
import { type Client, client, type Harness, harness, newShop, type TestShop } from '../harness.js';
import { documentOf, jpeg, parentPayment, pdf, png, proofBody, proofUrl, sha256 } from './files.js';

let h: Harness;
let shop: TestShop;
let api: Client;
let url: string;

beforeAll(async () => {
  h = await harness();
  shop = await newShop(h);
  api = client(h, shop);
  // Every request here is refused before the duplicate window matters, so one parent serves all.
  url = proofUrl(await parentPayment(h, shop));
});

const file = pdf();

describe('payment proof: the request object', () => {
  it('requires request', async () => {
    const res = await api.post(url, { amount: 1999 });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ message: "Request can't be blank", errors: { request: ["can't be blank"] } });
  });

  it.each([[[1]], ['text'], [5]])('refuses a request that is not an object: %j', async (request) => {
    const res = await api.post(url, { request });
    expect(res.body).toEqual({
      message: 'Request must be an object',
      errors: { request: ['must be an object'] },
    });
  });

  it('names fields inside request without the wrapper, and reports them all at once', async () => {
    const res = await api.post(url, { request: {} });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      message: "Amount can't be blank, Currency can't be blank, and Document can't be blank",
      errors: { amount: ["can't be blank"], currency: ["can't be blank"], document: ["can't be blank"] },
    });
  });
});

describe('payment proof: amount, currency, reference, duplicate flag', () => {
  it.each([
    [0, 'must be greater than 0'],
    [-5, 'must be greater than 0'],
    [10.5, 'must be an integer'],
    ['10.5', 'must be an integer'],
    ['ten', 'is not a number'],
    [true, 'is not a number'],
    [2 ** 53, 'must be less than or equal to 9007199254740991'],
    ['99999999999999999999', 'must be less than or equal to 9007199254740991'],
  ])('refuses amount %j', async (amount, msg) => {
    const res = await api.post(url, proofBody(file, { amount }));
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ message: `Amount ${msg}`, errors: { amount: [msg] } });
  });

  it('accepts the largest exact amount', async () => {
    const parent = await parentPayment(h, shop);
    const res = await api.post(proofUrl(parent), proofBody(file, { amount: Number.MAX_SAFE_INTEGER }));
    expect(res.status).toBe(200);
    expect(res.body.transaction.amount).toBe(Number.MAX_SAFE_INTEGER);
  });

  it.each(['XYZ', 'usd', 'EURO', 'BTC'])('refuses currency %s (ISO 4217 only)', async (currency) => {
    const res = await api.post(url, proofBody(file, { currency }));
    expect(res.body).toEqual({ message: 'Currency is invalid', errors: { currency: ['is invalid'] } });
  });

  it('refuses a transaction_reference that is too long, not a string or has control characters', async () => {
    const long = await api.post(url, proofBody(file, { transaction_reference: 'r'.repeat(256) }));
    expect(long.body.errors).toEqual({ transaction_reference: ['is too long (maximum is 255 characters)'] });
    const num = await api.post(url, proofBody(file, { transaction_reference: 42 }));
    expect(num.body.errors).toEqual({ transaction_reference: ['must be a string'] });
    const control = await api.post(url, proofBody(file, { transaction_reference: 'a\u0007b\nc' }));
    expect(control.body.errors).toEqual({ transaction_reference: ['must not contain control characters'] });
    // NUL cannot be stored at all; the shared body check (src/http/validation.ts) refuses it first,
    // naming the field by its full path.
    const nul = await api.post(url, proofBody(file, { transaction_reference: 'a\u0000b' }));
    expect(nul.status).toBe(422);
    expect(JSON.stringify(nul.body.errors)).toContain('transaction_reference');
  });

  it('refuses a skip_duplicate_check that is not a boolean', async () => {
    const res = await api.post(url, proofBody(file, { skip_duplicate_check: 'yes' }));
    expect(res.body).toEqual({
      message: 'Skip duplicate check must be true or false',
      errors: { skip_duplicate_check: ['must be true or false'] },
    });
  });
});

const docError = async (document: Record<string, unknown>, f = file) => {
  const res = await api.post(url, proofBody(f, {}, document));
  expect(res.status).toBe(422);
  return res.body;
};

describe('payment proof: the document', () => {
  it('requires the document to be an object', async () => {
    const res = await api.post(url, { request: { amount: 1, currency: 'EUR', document: 'receipt.pdf' } });
    expect(res.body.errors).toEqual({ document: ['must be an object'] });
  });

  it.each(['content_type', 'file_name', 'file_size', 'content', 'checksum'])('requires %s', async (field) => {
    const document = documentOf(file) as Record<string, unknown>;
    delete document[field];
    const res = await api.post(url, { request: { amount: 1999, currency: 'EUR', document } });
    expect(res.status).toBe(422);
    expect(res.body.errors.document[field]).toEqual(["can't be blank"]);
  });

  it('refuses a content type other than PDF, PNG and JPEG', async () => {
    expect(await docError({ content_type: 'image/gif' })).toEqual({
      message: 'Document content type must be one of application/pdf, image/png, image/jpeg',
      errors: { document: { content_type: ['must be one of application/pdf, image/png, image/jpeg'] } },
    });
  });

  it.each([
    ['receipt.png', 'must end with .pdf for application/pdf'],
    ['receipt', 'must end with .pdf for application/pdf'],
    ['.pdf', 'must end with .pdf for application/pdf'],
    ['../receipt.pdf', 'must be a file name, not a path'],
    ['a\\receipt.pdf', 'must be a file name, not a path'],
    ['rec\neipt.pdf', 'must not contain control characters'],
    [`${'r'.repeat(252)}.pdf`, 'is too long (maximum is 255 characters)'],
    ['   ', "can't be blank"],
  ])('refuses file_name %j', async (file_name, msg) => {
    expect((await docError({ file_name })).errors).toEqual({ document: { file_name: [msg] } });
  });

  it('names both JPEG extensions for image/jpeg', async () => {
    const body = await docError({ file_name: 'scan.pdf' }, jpeg());
    expect(body.errors.document.file_name).toEqual(['must end with .jpg or .jpeg for image/jpeg']);
  });

  it.each([
    [0, 'must be greater than 0'],
    [1.5, 'must be an integer'],
    ['big', 'is not a number'],
    [file.bytes.length + 1, `does not match the size of the content (${file.bytes.length} bytes)`],
    [file.bytes.length - 1, `does not match the size of the content (${file.bytes.length} bytes)`],
  ])('refuses file_size %j', async (file_size, msg) => {
    expect((await docError({ file_size })).errors).toEqual({ document: { file_size: [msg] } });
  });

  const b64 = file.bytes.toString('base64');
  it.each([
    ['a character outside the alphabet', `${b64.slice(0, 8)}!${b64.slice(9)}`],
    ['a line break', `${b64.slice(0, 76)}\n${b64.slice(76)}`],
    ['a space', `${b64.slice(0, 76)} ${b64.slice(77)}`],
    ['missing padding', 'JVBERi0xLjQK'.slice(0, 10)],
    ['too much padding', 'JVBERi0=='],
    ['padding in the middle', 'JV==Ri0xLjQK'],
    ['non-zero bits before the padding', 'JVBERi0xLjR='],
    ['url-safe alphabet', '-_-_'],
  ])('refuses content with %s', async (_case, content) => {
    const body = await docError({ content });
    expect(body.errors).toEqual({
      document: { content: ['must be base64 (A-Z, a-z, 0-9, + and /, padded with =, no line breaks)'] },
    });
  });

  it('refuses a checksum that is not the SHA-256 of the content', async () => {
    expect((await docError({ checksum: sha256(Buffer.from('other')) })).errors).toEqual({
      document: { checksum: ['does not match the SHA-256 of the content'] },
    });
    expect((await docError({ checksum: 'abc123' })).errors).toEqual({
      document: { checksum: ['must be a SHA-256 digest in hexadecimal (64 characters)'] },
    });
  });

  it('refuses a JPEG labelled as a PDF, and a PDF labelled as a PNG', async () => {
    const jpg = jpeg();
    const asPdf = await api.post(
      url,
      proofBody(jpg, {}, { content_type: 'application/pdf', file_name: 'r.pdf' }),
    );
    expect(asPdf.body).toEqual({
      message: 'Document content type does not match the content, which is a JPEG image',
      errors: { document: { content_type: ['does not match the content, which is a JPEG image'] } },
    });
    const asPng = await docError({ content_type: 'image/png', file_name: 'r.png' });
    expect(asPng.errors).toEqual({
      document: { content_type: ['does not match the content, which is a PDF'] },
    });
  });

  it('refuses bytes that are none of the accepted kinds', async () => {
    const gif = {
      bytes: Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1'),
      type: 'image/png' as const,
      name: 'a.png',
    };
    expect((await docError({}, gif)).errors).toEqual({
      document: { content: ['is not a PDF, PNG or JPEG file'] },
    });
  });

  it('reports request and document errors together in one sentence', async () => {
    const res = await api.post(url, proofBody(png(), { amount: 0 }, { file_name: 'x.gif', checksum: 'zz' }));
    expect(res.body).toEqual({
      message:
        'Amount must be greater than 0, Document file name must end with .png for image/png, and Document checksum must be a SHA-256 digest in hexadecimal (64 characters)',
      errors: {
        amount: ['must be greater than 0'],
        document: {
          file_name: ['must end with .png for image/png'],
          checksum: ['must be a SHA-256 digest in hexadecimal (64 characters)'],
        },
      },
    });
  });
});
