import { createHash, randomUUID } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { insertTransaction, type TransactionRow } from '../../src/ledger/repository.js';
import type { Harness, TestShop } from '../harness.js';

/** Real, minimal documents built in the test: their magic bytes are what the service checks. */

export interface TestFile {
  bytes: Buffer;
  type: 'application/pdf' | 'image/png' | 'image/jpeg';
  name: string;
}

/** A one-page PDF with a text line, a cross-reference table and %%EOF. */
export function pdf(text = 'Paid 19.99 EUR', name = 'receipt.pdf'): TestFile {
  const stream = `BT /F1 12 Tf 72 720 Td (${text}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return { bytes: Buffer.from(out, 'latin1'), type: 'application/pdf', name };
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(data: Buffer): number {
  let c = 0xffffffff;
  for (const byte of data) c = (CRC_TABLE[(c ^ byte) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** An RGB PNG of one colour; `seed` varies the colour so files differ. */
export function png(width = 4, height = 4, seed = 0, name = 'receipt.png'): TestFile {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit, truecolour, deflate, no filter method, no interlace
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3, seed & 0xff)]);
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  const bytes = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
  return { bytes, type: 'image/png', name };
}

function segment(marker: number, data: Buffer): Buffer {
  const head = Buffer.from([0xff, marker, 0, 0]);
  head.writeUInt16BE(data.length + 2, 2);
  return Buffer.concat([head, data]);
}

/** A JPEG skeleton: SOI, APP0 (JFIF), a comment, EOI. */
export function jpeg(comment = 'receipt', name = 'receipt.jpg'): TestFile {
  const jfif = Buffer.from([0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  const bytes = Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    segment(0xe0, jfif),
    segment(0xfe, Buffer.from(comment, 'latin1')),
    Buffer.from([0xff, 0xd9]),
  ]);
  return { bytes, type: 'image/jpeg', name };
}

export const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

export function documentOf(file: TestFile) {
  return {
    content_type: file.type,
    file_name: file.name,
    file_size: file.bytes.length,
    content: file.bytes.toString('base64'),
    checksum: sha256(file.bytes),
  };
}

/** A valid proof body for the file; `request` and `document` members can be overridden. */
export function proofBody(
  file: TestFile,
  request: Record<string, unknown> = {},
  document: Record<string, unknown> = {},
) {
  return {
    request: {
      amount: 1999,
      currency: 'EUR',
      transaction_reference: 'receipt-42',
      ...request,
      document: { ...documentOf(file), ...document },
    },
  };
}

/** A successful payment of the shop, written straight to the ledger, for proofs to attach to. */
export async function parentPayment(
  h: Harness,
  shop: TestShop,
  extra: Partial<TransactionRow> = {},
): Promise<string> {
  const uid = randomUUID();
  await h.db.tx((tx) =>
    insertTransaction(
      tx,
      {
        uid,
        shop_id: shop.shop.id,
        type: 'payment',
        status: 'successful',
        message: 'Successfully processed',
        amount: 1999,
        currency: 'EUR',
        test: true,
        ...extra,
      },
      h.clock.now(),
    ),
  );
  return uid;
}

export const proofUrl = (uid: string, area = 'alt') => `/${area}/transactions/${uid}/proof`;
