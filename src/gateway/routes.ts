import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { ctxOf } from '../http/ctx.js';
import type { TransactionAnswer } from './answer.js';
import { authorize, credit, pay } from './charge.js';
import { capture, refund, voidAuthorization } from './children.js';
import { asSentence, gatewayErrorBody } from './error-body.js';
import { GatewayTimeout } from './errors.js';
import { getTransaction, newestByTrackingId, transactionsByTrackingId } from './query.js';
import {
  CardRecordSchema,
  CardUpdateBody,
  ChargeBody,
  ChildBodies,
  CreditBody,
  GatewayTimeoutError,
  gatewayErrors,
  TokenizeBody,
  TransactionEnvelope,
  TransactionsEnvelope,
} from './schemas.js';
import { tokenize, updateCardByToken } from './tokenize.js';

/** The card gateway in the platform's protocol: `{"request": ...}` in, `{"transaction": ...}` out. */

// Every gateway route answers errors as the platform does: wrapped in `response`, in its sentences.
// Another Kopek deployment may call them for a shop with its GATEWAY_TOKEN credential
// (service-credential.ts).
const config = { errorEnvelope: gatewayErrorBody, serviceCredential: true };
// A charge's 504 is an answer with a pending transaction behind it: sent with an Idempotency-Key, it
// is stored and replayed like any other, so a resend is told the same instead of charging again.
const chargeConfig = { ...config, timeoutIsAnswer: true };
const tags = ['gateway'];

/**
 * The acquirer's silence answers 504 rather than a hang, so an HTTP client sees the same unknown
 * outcome the in-process client reports as GatewayTimeout.
 */
async function transaction(reply: FastifyReply, work: () => Promise<TransactionAnswer>) {
  try {
    return { transaction: await work() };
  } catch (err) {
    if (!(err instanceof GatewayTimeout)) throw err;
    return reply.code(504).send({
      response: {
        message: asSentence(err.message),
        errors: { base: [err.message] },
        uid: err.uid ?? null,
        tracking_id: err.trackingId,
      },
    });
  }
}

export const gatewayRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const response = { 200: TransactionEnvelope, 504: GatewayTimeoutError, ...gatewayErrors };
  const charges = [
    ['/transactions/payments', 'Payment: authorization and capture at once', pay, ChargeBody],
    ['/transactions/authorizations', 'Authorization: reserve the amount', authorize, ChargeBody],
    ['/transactions/credits', 'Credit: send money to a card', credit, CreditBody],
  ] as const;
  for (const [url, summary, verb, body] of charges) {
    app.post(url, { config: chargeConfig, schema: { tags, summary, body, response } }, (request, reply) =>
      transaction(reply, () => verb(ctxOf(request), request.body)),
    );
  }

  const children = [
    ['/transactions/captures', 'Capture an authorization (once, at most its amount)', capture, 'capture'],
    ['/transactions/voids', 'Void an uncaptured authorization (once)', voidAuthorization, 'void'],
    ['/transactions/refunds', 'Refund a payment or capture; reason required', refund, 'refund'],
  ] as const;
  for (const [url, summary, verb, kind] of children) {
    app.post(
      url,
      { config: chargeConfig, schema: { tags, summary, body: ChildBodies[kind], response } },
      (request, reply) => transaction(reply, () => verb(ctxOf(request), request.body)),
    );
  }

  const cardResponse = { 200: CardRecordSchema, ...gatewayErrors };
  for (const url of ['/credit_cards', '/v2/credit_cards']) {
    app.post(
      url,
      {
        config,
        schema: {
          tags,
          summary: 'Tokenize a card, or update holder and expiry of a token',
          body: TokenizeBody,
          response: cardResponse,
        },
      },
      (request) => tokenize(ctxOf(request), request.body),
    );
  }
  // The platform's clients update a stored card by the token in the path, by either verb.
  for (const [method, url] of [
    ['POST', '/credit_cards/:token'],
    ['PUT', '/v2/credit_cards/:token'],
  ] as const) {
    app.route({
      method,
      url,
      config,
      schema: {
        tags,
        summary: "Update a stored card's holder or expiry; the number never changes",
        params: Type.Object({ token: Type.String() }),
        body: CardUpdateBody,
        response: cardResponse,
      },
      handler: (request) => updateCardByToken(ctxOf(request), request.params.token, request.body),
    });
  }

  app.get(
    '/transactions/:uid',
    {
      config,
      schema: {
        tags,
        summary: 'A transaction by uid',
        params: Type.Object({ uid: Type.String() }),
        response,
      },
    },
    async (request) => ({ transaction: await getTransaction(ctxOf(request), request.params.uid) }),
  );

  // The platform's clients call both forms of the query by tracking_id and read different answers:
  // the PHP client a list at /v2, the Ruby client one transaction without it (decisions.md).
  app.get(
    '/v2/transactions/tracking_id/:tracking_id',
    {
      config,
      schema: {
        tags,
        summary: 'The newest transactions with this tracking_id (up to 10), newest first; maybe none',
        params: Type.Object({ tracking_id: Type.String() }),
        response: { 200: TransactionsEnvelope, ...gatewayErrors },
      },
    },
    async (request) => ({
      transactions: await transactionsByTrackingId(ctxOf(request), request.params.tracking_id),
    }),
  );
  app.get(
    '/transactions/tracking_id/:tracking_id',
    {
      config,
      schema: {
        tags,
        summary: 'The newest transaction with this tracking_id; 404 "Record not found" when none',
        params: Type.Object({ tracking_id: Type.String() }),
        response: { 200: TransactionEnvelope, ...gatewayErrors },
      },
    },
    async (request) => ({
      transaction: await newestByTrackingId(ctxOf(request), request.params.tracking_id),
    }),
  );
};
