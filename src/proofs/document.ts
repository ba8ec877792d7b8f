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

/**
 * The decoded bytes of strict base64, or undefined for anything Buffer.from would have to guess at.
 * Buffer.from silently skips stray characters and whitespace, accepts the URL-safe alphabet and
 * missing padding, and ignores non-zero bits before the padding, so a damaged upload would decode
 * to other bytes. Every string of bytes has exactly one canonical padded encoding, so the text is
 * strict base64 exactly when encoding its bytes again gives the text back. That costs time in
 * proportion to the length; a regular expression over documents of megabytes overflowed the stack.
 */
export function decodeStrictBase64(text: string): Buffer | undefined {
  if (text.length % 4 !== 0) return undefined;
  const bytes = Buffer.from(text, 'base64');
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

/** The Content-Security-Policy of a document sent back: nothing loads, and it runs in a sandbox. */
export const DOCUMENT_POLICY = "default-src 'none'; sandbox";

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
