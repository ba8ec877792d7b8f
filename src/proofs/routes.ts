import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { GatewayError, gatewayErrorBody, gatewayErrors } from '../gateway/index.js';
import { ctxOf } from '../http/ctx.js';
import { ErrorBodySchema, errorResponses, Nullable } from '../http/schemas.js';
import { contentDisposition, DOCUMENT_POLICY, DOCUMENT_TYPES } from './document.js';
import { ProofRequest, refuseLargeDocument } from './input.js';
import { getProofDocument, submitProof } from './service.js';

export const ProofTransactionSchema = Type.Object(
  {
    transaction: Type.Object(
      {
        uid: Type.String(),
        status: Type.String({ description: 'successful: the proof was received and stored' }),
        message: Type.String(),
        amount: Type.Integer(),
        parent_uid: Type.String(),
        currency: Type.String(),
        type: Type.Literal('proof'),
        proof: Type.Object(
          {
            message: Type.String(),
            ref_id: Nullable(Type.String()),
            gateway_id: Type.Integer(),
            status: Type.Union([Type.Literal('successful'), Type.Literal('failed')], {
              description: 'successful when amount and currency equal the transaction, failed otherwise',
            }),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
  },
  { $id: 'ProofTransaction' },
);

// Sent as the raw bytes with the stored content type; the schema only documents that, per media type.
const DocumentBytes = Type.Unsafe<Buffer>({
  description: 'The document exactly as sent, with its content type',
  content: Object.fromEntries(
    DOCUMENT_TYPES.map((t) => [t, { schema: { type: 'string', format: 'binary' } }]),
  ),
});

const UidParams = Type.Object({ uid: Type.String() });

/**
 * The route's body limit, raised for this route only: base64 is 4/3 of the bytes, up to 1/8 more
 * for JSON encoders that escape '/' as '\/', and 64 KiB for the other fields. The exact rule
 * (decoded bytes ≤ PROOF_MAX_BYTES) is checked by the verb; this only stops reading sooner.
 */
export function proofBodyLimit(maxBytes: number): number {
  const base64 = Math.ceil(maxBytes / 3) * 4;
  return base64 + Math.ceil(base64 / 8) + 64 * 1024;
}

// `alt` is the seed's name for the area; `beyag` is the platform's own (decisions.md). The platform's
// gateway clients send the proof to the gateway's own address and read its errors as every gateway
// error, wrapped in `response`. One handler for all three.
const apiErrors = { 413: ErrorBodySchema, ...errorResponses };
const AREAS = [
  { area: '/alt', alias: '', config: {}, errors: apiErrors },
  { area: '/beyag', alias: ' (alias of /alt)', config: {}, errors: apiErrors },
  {
    area: '',
    alias: ' (alias of /alt at the gateway address; errors wrapped in response)',
    config: { errorEnvelope: gatewayErrorBody },
    errors: { 413: GatewayError, ...gatewayErrors },
  },
] as const;

export const proofRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const bodyLimit = proofBodyLimit(app.services.config.proofMaxBytes);
  for (const { area, alias, config, errors } of AREAS) {
    app.post(
      `${area}/transactions/:uid/proof`,
      {
        bodyLimit,
        config,
        preValidation: async (request) =>
          refuseLargeDocument(request.body, app.services.config.proofMaxBytes),
        schema: {
          tags: ['payment proof'],
          summary: `Submit a payment proof for a transaction${alias}`,
          params: UidParams,
          body: ProofRequest,
          response: { 200: ProofTransactionSchema, ...errors },
        },
      },
      // 200, not 201: the seed shows no code and the platform's transaction endpoints answer 200.
      async (request) => ({
        transaction: await submitProof(
          ctxOf(request),
          request.params.uid,
          request.body as unknown as Record<string, unknown>,
        ),
      }),
    );
    // The gateway's clients only submit; the download stays in the API's areas.
    if (area === '') continue;

    app.get(
      `${area}/transactions/:uid/proof/document`,
      {
        schema: {
          tags: ['payment proof'],
          summary: `Download the proof document (by transaction uid: the newest; or by proof uid)${alias}`,
          params: UidParams,
          response: { 200: DocumentBytes, ...errorResponses },
        },
      },
      async (request, reply) => {
        const doc = await getProofDocument(ctxOf(request), request.params.uid);
        return (
          reply
            .type(doc.content_type)
            .header('content-disposition', contentDisposition(doc.file_name))
            .header('x-content-type-options', 'nosniff')
            // A document opened in a browser anyway (a PDF may carry script) runs nothing in this origin.
            .header('content-security-policy', DOCUMENT_POLICY)
            .header('cache-control', 'private, no-store')
            .send(doc.content)
        );
      },
    );
  }
};
