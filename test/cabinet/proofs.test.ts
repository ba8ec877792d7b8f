import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { charge } from '../gateway/helpers.js';
import { client, harness, newShop } from '../harness.js';
import { signedIn } from './session.js';

/** The cabinet's payment proofs: list, a proof's page with its preview, and the document's download. */

const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from('not really an image, but PNG by its first bytes'),
]);
const PDF = Buffer.from('%PDF-1.4\n<script>alert(1)</script>\n%%EOF');

async function shopWithProofs() {
  const h = await harness();
  const shop = await newShop(h, { name: 'Proofs shop' });
  const api = client(h, shop);
  const pay = async () => {
    const res = await api.post('/transactions/payments', { request: charge({ amount: 1000 }) });
    expect(res.status).toBe(200);
    return res.body.transaction.uid as string;
  };
  const prove = async (
    parent: string,
    bytes: Buffer,
    fileName: string,
    contentType: string,
    amount = 1000,
  ) => {
    const res = await api.post(`/alt/transactions/${parent}/proof`, {
      request: {
        amount,
        currency: 'EUR',
        transaction_reference: 'RCPT-1',
        skip_duplicate_check: true,
        document: {
          content_type: contentType,
          file_name: fileName,
          file_size: bytes.length,
          content: bytes.toString('base64'),
          checksum: createHash('sha256').update(bytes).digest('hex'),
        },
      },
    });
    expect(res.status).toBe(200);
    return res.body.transaction.uid as string;
  };
  return { h, shop, api, pay, prove, cab: await signedIn(h, shop) };
}

const proofsIn = (html: string) =>
  [...html.matchAll(/href="\/cabinet\/proofs\/([0-9a-f-]{36})"/g)].map((m) => m[1]);

describe('cabinet payment proofs', () => {
  it('lists proofs newest first with file, type, size and whether they match, and filters by transaction', async () => {
    const { pay, prove, cab } = await shopWithProofs();
    const p1 = await pay();
    const p2 = await pay();
    const a = await prove(p1, PNG, 'receipt "<b>".png', 'image/png');
    const b = await prove(p2, PDF, 'statement.pdf', 'application/pdf', 999);
    const page = await cab.get('/cabinet/proofs');
    expect(page.status).toBe(200);
    expect(proofsIn(page.body)).toEqual([b, a]);
    expect(page.body).toContain('receipt &quot;&lt;b>&quot;.png');
    expect(page.body).toContain('PDF');
    expect(page.body).toContain('differs');
    expect(page.body).toContain('matches');
    expect(proofsIn((await cab.get(`/cabinet/proofs?transaction=${p1}`)).body)).toEqual([a]);
    const bad = await cab.get('/cabinet/proofs?transaction=zzz');
    expect(bad.status).toBe(200);
    expect(bad.body).toContain('A UID looks like');
  });

  it('previews an image inline and downloads any proof as an attachment with safe headers', async () => {
    const { h, pay, prove, cab } = await shopWithProofs();
    const parent = await pay();
    const img = await prove(parent, PNG, 'чек "1".png', 'image/png');
    const pdf = await prove(parent, PDF, 'statement.pdf', 'application/pdf');
    const page = await cab.get(`/cabinet/proofs/${img}`);
    expect(page.body).toContain(`<img class="proof-preview" src="/cabinet/proofs/${img}/preview"`);
    expect(page.body).toContain(`href="/cabinet/payments/${parent}"`);
    const cookie = [...cab.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const get = (url: string) => h.app.inject({ method: 'GET', url, headers: { cookie } });

    const download = await get(`/cabinet/proofs/${img}/download`);
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-type']).toBe('image/png');
    expect(download.headers['content-disposition']).toBe(
      `attachment; filename="___ _1_.png"; filename*=UTF-8''%D1%87%D0%B5%D0%BA%20%221%22.png`,
    );
    expect(download.headers['x-content-type-options']).toBe('nosniff');
    expect(download.headers['content-security-policy']).toContain('sandbox');
    expect(download.rawPayload.equals(PNG)).toBe(true);

    const preview = await get(`/cabinet/proofs/${img}/preview`);
    expect(preview.statusCode).toBe(200);
    expect(String(preview.headers['content-disposition'])).toMatch(/^inline; /);

    // A PDF is never shown inline: its page offers the download only.
    const pdfPage = await cab.get(`/cabinet/proofs/${pdf}`);
    expect(pdfPage.body).not.toContain('<img');
    expect(pdfPage.body).toContain('download the file to open it');
    expect((await get(`/cabinet/proofs/${pdf}/preview`)).statusCode).toBe(404);
    const pdfDownload = await get(`/cabinet/proofs/${pdf}/download`);
    expect(pdfDownload.headers['content-type']).toBe('application/pdf');
    expect(String(pdfDownload.headers['content-disposition'])).toMatch(/^attachment; /);
  });

  it("answers another shop's proof, its download and a transaction uid with not found", async () => {
    const { pay, cab } = await shopWithProofs();
    const mine = await pay();
    const other = await shopWithProofs();
    const foreign = await other.prove(await other.pay(), PNG, 'secret.png', 'image/png');
    for (const url of [
      `/cabinet/proofs/${foreign}`,
      `/cabinet/proofs/${foreign}/download`,
      `/cabinet/proofs/${foreign}/preview`,
      `/cabinet/proofs/${mine}`,
      '/cabinet/proofs/nope/download',
    ]) {
      const res = await cab.get(url);
      expect(res.status, url).toBe(404);
      expect(res.body).not.toContain('secret.png');
    }
    expect(proofsIn((await cab.get('/cabinet/proofs')).body)).toEqual([]);
  });

  it('the download needs a session', async () => {
    const { h, pay, prove } = await shopWithProofs();
    const proof = await prove(await pay(), PNG, 'a.png', 'image/png');
    const res = await h.app.inject({ method: 'GET', url: `/cabinet/proofs/${proof}/download` });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toContain('/cabinet/sign-in');
  });
});
