import { createHash } from 'node:crypto';
import { Type } from 'typebox';
import { ApiError, ErrorCollector } from '../core/errors.js';
import {
  addFormat,
  checkBody,
  enforced,
  type RuleCheck,
  unwrapErrors,
  withRules,
} from '../core/schema-check.js';
import { MESSAGES } from '../core/schema-errors.js';
import { Nullable, Text, WholeNumber } from '../http/schemas.js';
import {
  DOCUMENT_TYPES,
  type DocumentType,
  decodedLength,
  decodeStrictBase64,
  EXTENSIONS,
  extensionFits,
  hasUnsafeText,
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

addFormat('safe-text', (text) => !hasUnsafeText(text));

/** A file name's extension must fit its content type (when both are valid). */
function extensionFitsType(doc: Record<string, unknown>, check: RuleCheck): void {
  const { file_name: name, content_type: type } = doc;
  if (!check.passed('file_name') || !check.passed('content_type')) return;
  if (!extensionFits(name as string, type as DocumentType))
    check.add('file_name', `must end with ${EXTENSIONS[type as DocumentType].join(' or ')} for ${type}`);
}

/**
 * `{"request": {...}}`. Errors name the fields inside `request` without that wrapper
 * (`errors.amount`, `errors.document.checksum`), as the platform reports a transaction request's
 * fields; only a missing or non-object `request` itself is `errors.request`.
 */
export const ProofRequest = enforced(
  Type.Object({
    request: unwrapErrors(
      Type.Object({
        // Amounts are exact only up to 2^53 in Kopek (bigint columns read back as numbers), so the
        // seed's "bigInteger" is refused beyond that with the limit named, rather than stored rounded.
        amount: WholeNumber({
          exclusiveMinimum: 0,
          maximum: Number.MAX_SAFE_INTEGER,
          description: 'Proven amount in minor units; a numeric string is accepted too',
        }),
        currency: Text({ format: 'iso-currency', description: 'ISO 4217 alpha-3 code' }),
        transaction_reference: Type.Optional(
          Nullable(
            Type.String({
              maxLength: 255,
              format: 'safe-text',
              description: 'Receipt identifier',
              [MESSAGES]: { format: UNSAFE },
            }),
          ),
        ),
        skip_duplicate_check: Type.Optional(
          Nullable(
            Type.Boolean({
              default: false,
              description: 'Allow a second proof for the uid within 30 seconds',
            }),
          ),
        ),
        document: withRules(
          Type.Object({
            content_type: Type.Enum(DOCUMENT_TYPES, {
              type: 'string',
              [MESSAGES]: { enum: `must be one of ${DOCUMENT_TYPES.join(', ')}` },
            }),
            file_name: Text({
              maxLength: 255,
              format: 'safe-text',
              not: { pattern: '[/\\\\]' },
              description: 'A file name, no path; its extension must fit content_type',
              [MESSAGES]: { format: UNSAFE, not: 'must be a file name, not a path' },
            }),
            file_size: WholeNumber({ exclusiveMinimum: 0, description: 'Bytes of the decoded content' }),
            content: Text({ description: 'The file in base64 (RFC 4648, padded, no line breaks)' }),
            checksum: Type.String({
              minLength: 1,
              pattern: '^[0-9a-fA-F]{64}$',
              description: 'SHA-256 of the file, hex',
              [MESSAGES]: { pattern: 'must be a SHA-256 digest in hexadecimal (64 characters)' },
            }),
          }),
          extensionFitsType,
        ),
      }),
    ),
  }),
);

function tooLarge(maxBytes: number): ApiError {
  return ApiError.base('payload_too_large', `Document is too large (maximum is ${maxBytes} bytes)`);
}

/**
 * A document over maxBytes is a 413, not a 422, whatever else is wrong: checked before the body's
 * schema (the route's preValidation), from the announced file_size or the content's length, so an
 * oversized document is not worth the work of checking it.
 */
export function refuseLargeDocument(body: unknown, maxBytes: number): void {
  const request = (body as { request?: unknown } | null)?.request;
  const doc = (request as { document?: unknown } | null | undefined)?.document;
  if (typeof doc !== 'object' || doc === null) return;
  const { file_size: size, content } = doc as Record<string, unknown>;
  const announced = typeof size === 'string' && /^\s*\d+\s*$/.test(size) ? Number(size) : size;
  if (typeof announced === 'number' && Number.isInteger(announced) && announced > maxBytes)
    throw tooLarge(maxBytes);
  if (typeof content === 'string' && decodedLength(content) > maxBytes) throw tooLarge(maxBytes);
}

/** The rules against the content itself, once its fields are valid: it decodes, and is what they say. */
function readContent(doc: Record<string, unknown>, errors: ErrorCollector) {
  const add = (field: string, message: string) => errors.add(['document', field], message);
  const content = decodeStrictBase64(doc.content as string);
  if (!content) {
    add('content', 'must be base64 (A-Z, a-z, 0-9, + and /, padded with =, no line breaks)');
    return undefined;
  }
  if (doc.file_size !== content.length)
    add('file_size', `does not match the size of the content (${content.length} bytes)`);
  const checksum = createHash('sha256').update(content).digest('hex');
  if ((doc.checksum as string).toLowerCase() !== checksum)
    add('checksum', 'does not match the SHA-256 of the content');
  const sniffed = sniffType(content);
  if (!sniffed) add('content', 'is not a PDF, PNG or JPEG file');
  else if (sniffed !== doc.content_type)
    add('content_type', `does not match the content, which is ${NAMES[sniffed]}`);
  return {
    contentType: doc.content_type as DocumentType,
    fileName: doc.file_name as string,
    content,
    checksum,
  };
}

/** Checks a proof request (ProofRequest, the size limit, the content) and returns it read. */
export function parseProofRequest(body: Record<string, unknown>, maxBytes: number): ProofInput {
  refuseLargeDocument(body, maxBytes);
  const errors = new ErrorCollector();
  if (!checkBody(ProofRequest, body, errors)) errors.throwIfAny();
  const request = body.request as Record<string, unknown>;
  const document = readContent(request.document as Record<string, unknown>, errors);
  errors.throwIfAny();
  const reference = request.transaction_reference;
  return {
    amount: request.amount as number,
    currency: request.currency as string,
    transactionReference: typeof reference === 'string' && reference !== '' ? reference : null,
    skipDuplicateCheck: request.skip_duplicate_check === true,
    document: document as ProofInput['document'],
  };
}
