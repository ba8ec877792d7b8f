import { createHash } from 'node:crypto';
import { ApiError, ErrorCollector } from '../core/errors.js';
import { Fields, Msg } from '../core/rules.js';
import {
  DOCUMENT_TYPES,
  type DocumentType,
  decodedLength,
  decodeStrictBase64,
  EXTENSIONS,
  extensionFits,
  hasUnsafeText,
  isDocumentType,
  sniffType,
} from './document.js';

/** A proof request after validation: every rule held, the document decoded and verified. */
export interface ProofInput {
  amount: number;
  currency: string;
  transactionReference: string | null;
  skipDuplicateCheck: boolean;
  document: {
    contentType: DocumentType;
    fileName: string;
    content: Buffer;
    /** SHA-256 of content, lowercase hex. */
    checksum: string;
  };
}

const NAMES: Record<DocumentType, string> = {
  'application/pdf': 'a PDF',
  'image/png': 'a PNG image',
  'image/jpeg': 'a JPEG image',
};
const UNSAFE = 'must not contain control characters';

function tooLarge(maxBytes: number): ApiError {
  return ApiError.base('payload_too_large', `Document is too large (maximum is ${maxBytes} bytes)`);
}

/**
 * Amounts are exact only up to 2^53 in Kopek (bigint columns read back as numbers), so the seed's
 * "bigInteger" is accepted up to Number.MAX_SAFE_INTEGER and refused beyond with that limit named,
 * rather than stored rounded. A numeric string is accepted like everywhere else (decisions.md).
 */
function readAmount(f: Fields, body: Record<string, unknown>): number | undefined {
  const v = body.amount;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
  if (Number.isInteger(n) && !Number.isSafeInteger(n)) {
    f.check('amount', false, `must be less than or equal to ${Number.MAX_SAFE_INTEGER}`);
    return undefined;
  }
  return f.integer('amount', { required: true, exclusiveMin: 0 });
}

function readDocument(doc: Record<string, unknown>, errors: ErrorCollector, maxBytes: number) {
  const f = new Fields(doc, errors, ['document']);
  const rawType = f.string('content_type', { required: true });
  const contentType = rawType !== undefined && isDocumentType(rawType) ? rawType : undefined;
  if (rawType !== undefined && !contentType)
    f.check('content_type', false, `must be one of ${DOCUMENT_TYPES.join(', ')}`);

  const fileName = f.string('file_name', { required: true, max: 255 });
  if (fileName !== undefined) {
    if (hasUnsafeText(fileName)) f.check('file_name', false, UNSAFE);
    else if (/[/\\]/.test(fileName)) f.check('file_name', false, 'must be a file name, not a path');
    else if (contentType && !extensionFits(fileName, contentType))
      f.check('file_name', false, `must end with ${EXTENSIONS[contentType].join(' or ')} for ${contentType}`);
  }

  const fileSize = f.integer('file_size', { required: true, exclusiveMin: 0 });
  const checksumText = f.string('checksum', { required: true });
  const checksum = checksumText?.toLowerCase();
  if (checksum !== undefined && !/^[0-9a-f]{64}$/.test(checksum))
    f.check('checksum', false, 'must be a SHA-256 digest in hexadecimal (64 characters)');

  const text = f.string('content', { required: true });
  // Refused before decoding: a document over the limit is not worth the work of checking it.
  if (fileSize !== undefined && fileSize > maxBytes) throw tooLarge(maxBytes);
  if (text !== undefined && decodedLength(text) > maxBytes) throw tooLarge(maxBytes);
  const content = text === undefined ? undefined : decodeStrictBase64(text);
  if (text !== undefined && !content)
    f.check('content', false, 'must be base64 (A-Z, a-z, 0-9, + and /, padded with =, no line breaks)');
  if (!content) return undefined;

  if (fileSize !== undefined && fileSize !== content.length)
    f.check('file_size', false, `does not match the size of the content (${content.length} bytes)`);
  const actual = createHash('sha256').update(content).digest('hex');
  if (checksum !== undefined && /^[0-9a-f]{64}$/.test(checksum) && checksum !== actual)
    f.check('checksum', false, 'does not match the SHA-256 of the content');
  const sniffed = sniffType(content);
  if (!sniffed) f.check('content', false, 'is not a PDF, PNG or JPEG file');
  else if (contentType && sniffed !== contentType)
    f.check('content_type', false, `does not match the content, which is ${NAMES[sniffed]}`);

  if (!contentType || fileName === undefined) return undefined;
  return { contentType, fileName, content, checksum: actual };
}

/**
 * Validates `{"request": {...}}`. Errors name the fields inside `request` without that wrapper
 * (`errors.amount`, `errors.document.checksum`), as the platform reports a transaction request's
 * fields; only a missing or non-object `request` itself is `errors.request`. A document over
 * maxBytes is a 413, not a 422, whatever else is wrong.
 */
export function parseProofRequest(body: Record<string, unknown>, maxBytes: number): ProofInput {
  const errors = new ErrorCollector();
  const outer = new Fields(body, errors);
  const request = outer.object('request');
  if (!request) {
    if (!outer.has('request')) errors.add('request', Msg.blank);
    throw ApiError.validation(errors.tree);
  }
  const f = new Fields(request, errors);
  const amount = readAmount(f, request);
  const currency = f.currency('currency', { required: true, isoOnly: true });
  const reference = f.string('transaction_reference', { max: 255 });
  if (reference !== undefined && hasUnsafeText(reference)) f.check('transaction_reference', false, UNSAFE);
  const skip = f.boolean('skip_duplicate_check');
  const doc = f.object('document');
  if (!f.has('document')) errors.add('document', Msg.blank);
  const document = doc ? readDocument(doc, errors, maxBytes) : undefined;
  errors.throwIfAny();
  return {
    amount: amount as number,
    currency: currency as string,
    transactionReference: reference ?? null,
    skipDuplicateCheck: skip ?? false,
    document: document as ProofInput['document'],
  };
}
