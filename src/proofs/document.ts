/** What a proof document may be, and how its bytes are recognised: no trust in the label alone. */

export const DOCUMENT_TYPES = ['application/pdf', 'image/png', 'image/jpeg'] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

export const EXTENSIONS: Record<DocumentType, readonly string[]> = {
  'application/pdf': ['.pdf'],
  'image/png': ['.png'],
  'image/jpeg': ['.jpg', '.jpeg'],
};

const MAGIC: [DocumentType, Buffer][] = [
  ['application/pdf', Buffer.from('%PDF-', 'latin1')],
  ['image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])],
  ['image/jpeg', Buffer.from([0xff, 0xd8, 0xff])],
];

/** The type the bytes themselves announce, or undefined when they are none of the accepted kinds. */
export function sniffType(bytes: Buffer): DocumentType | undefined {
  for (const [type, magic] of MAGIC) {
    if (bytes.length >= magic.length && bytes.subarray(0, magic.length).equals(magic)) return type;
  }
  return undefined;
}

export function isDocumentType(v: string): v is DocumentType {
  return (DOCUMENT_TYPES as readonly string[]).includes(v);
}

export function extensionFits(fileName: string, type: DocumentType): boolean {
  const lower = fileName.toLowerCase();
  return EXTENSIONS[type].some((ext) => lower.endsWith(ext) && lower.length > ext.length);
}

// Canonical base64 with padding: length a multiple of 4, '=' only at the end. Buffer.from would
// silently skip stray characters and whitespace, so a damaged upload would decode to other bytes.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The decoded bytes of strict base64, or undefined for anything Buffer.from would have to guess at. */
export function decodeStrictBase64(text: string): Buffer | undefined {
  if (text.length % 4 !== 0 || !BASE64.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  // Non-zero bits in the last character before the padding decode too; the round trip catches them.
  return bytes.toString('base64') === text ? bytes : undefined;
}

/** Bytes that base64 of this length decodes to, computed without decoding (for the size limit). */
export function decodedLength(text: string): number {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((text.length * 3) / 4) - padding);
}

// Control characters break the Content-Disposition header and NUL cannot be stored in a text column;
// lone surrogates cannot be stored in jsonb.
const UNSAFE_TEXT = /[\p{Cc}\p{Cs}]/u;
export const hasUnsafeText = (v: string): boolean => UNSAFE_TEXT.test(v);

/**
 * The Content-Disposition of a download: an ASCII fallback in `filename` (quotes and backslashes
 * replaced) and the exact name in `filename*` (RFC 6266), so no name can break the header.
 */
export function contentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const encoded = encodeURIComponent(fileName).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
