import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { sendPage } from '../../pages/render.js';
import { PageProblem } from '../../pages/scope.js';
import { contentDisposition, DOCUMENT_POLICY, getProofDocument } from '../../proofs/index.js';
import { cabinetOf } from '../context.js';
import { cursorOf, pageOf } from '../paging.js';
import { cabinetCtx, queryText } from '../payments/view.js';
import { PREVIEWABLE, ProofPage, ProofsPage } from './pages.js';
import { findProof, listProofPage } from './repository.js';
import { proofTexts } from './texts.js';

/**
 * The payment proofs section: /cabinet/proofs, a proof's page, and its document. The document is a
 * shop's upload: it is sent as an attachment, and shown inline only when it is an image (PNG, JPEG,
 * which src/proofs recognises by their bytes); nothing is ever sniffed as HTML or run as script, and
 * the sandbox policy keeps even a mislabelled file from acting in the cabinet's origin.
 */

const PAGE = 50;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Params = { uid: string };

async function documentOf(request: FastifyRequest<{ Params: Params }>) {
  const cabinet = cabinetOf(request);
  const row = await findProof(request.server.services.db, cabinet.shop.id, request.params.uid);
  if (!row) throw new PageProblem(404, 'notFound', cabinet.lang);
  // The API's own verb for the bytes: the same document GET /alt/transactions/{uid}/proof/document gives.
  return { row, doc: await getProofDocument(cabinetCtx(request), row.uid) };
}

function sendDocument(
  reply: FastifyReply,
  doc: { content_type: string; file_name: string; content: Buffer },
  inline: boolean,
) {
  const disposition = contentDisposition(doc.file_name);
  return reply
    .code(200)
    .type(doc.content_type)
    .header('content-disposition', inline ? disposition.replace(/^attachment/, 'inline') : disposition)
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', DOCUMENT_POLICY)
    .header('cache-control', 'private, no-store')
    .send(doc.content);
}

export const proofsSection: FastifyPluginAsync = async (app) => {
  app.get('/proofs', async (request, reply) => {
    const cabinet = cabinetOf(request);
    const query = request.query as Record<string, unknown>;
    const transaction = queryText(query.transaction, 64);
    const invalid = transaction !== undefined && !UUID.test(transaction);
    const fetched = invalid
      ? []
      : await listProofPage(
          request.server.services.db,
          cabinet.shop.id,
          transaction?.toLowerCase(),
          cursorOf(query.after),
          PAGE,
        );
    const { rows, next } = pageOf(fetched, PAGE);
    const error = invalid ? proofTexts(cabinet.lang).transactionInvalid : undefined;
    return sendPage(
      reply,
      200,
      <ProofsPage cabinet={cabinet} rows={rows} next={next} transaction={transaction} error={error} />,
    );
  });

  app.get<{ Params: Params }>('/proofs/:uid', async (request, reply) => {
    const cabinet = cabinetOf(request);
    const row = await findProof(request.server.services.db, cabinet.shop.id, request.params.uid);
    if (!row) throw new PageProblem(404, 'notFound', cabinet.lang);
    return sendPage(reply, 200, <ProofPage cabinet={cabinet} row={row} />);
  });

  app.get<{ Params: Params }>('/proofs/:uid/download', async (request, reply) => {
    const { doc } = await documentOf(request);
    return sendDocument(reply, doc, false);
  });

  // For the <img> of the proof's page: images only; anything else has no inline form at all.
  app.get<{ Params: Params }>('/proofs/:uid/preview', async (request, reply) => {
    const { doc } = await documentOf(request);
    if (!PREVIEWABLE.has(doc.content_type)) throw new PageProblem(404, 'notFound', cabinetOf(request).lang);
    return sendDocument(reply, doc, true);
  });
};
