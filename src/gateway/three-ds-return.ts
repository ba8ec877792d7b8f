import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Ctx } from '../context.js';
import { ApiError, ErrorCollector } from '../core/errors.js';
import { Fields, Msg } from '../core/rules.js';
import { ctxOf } from '../http/ctx.js';
import { gatewayErrorBody } from './error-body.js';
import { getTransaction } from './query.js';
import { gatewayErrors, TransactionEnvelope } from './schemas.js';
import { threeDSecureStep, UID } from './three-ds.js';
import { finishThreeDSecureStep, type ThreeDsRouteOptions } from './three-ds-finish.js';

/**
 * `POST /process/{uid}/return`: the shop's server finishes the cardholder's 3-D Secure step with the
 * answer the cardholder brought back (the platform's clients call it `finalize_3ds`). Unlike the page
 * it needs the shop's credentials, and answers the transaction as JSON instead of sending a browser
 * on: the caller is a program that reads `status`.
 */

const OUTCOMES = ['passed', 'failed'] as const;

/**
 * The cardholder's answer: `outcome` as the page's form posts it, or the platform's `pa_res` (the
 * issuer's answer to the challenge). The sandbox has no issuer to read a PaRes, so a PaRes means the
 * cardholder went through the step, and the card's own result applies, as for `passed`.
 */
function outcomeOf(body: unknown): 'passed' | 'failed' {
  const errors = new ErrorCollector();
  const f = new Fields((body ?? {}) as Record<string, unknown>, errors);
  const outcome = f.oneOf('outcome', OUTCOMES);
  const paRes = f.string('pa_res');
  errors.throwIfAny();
  if (outcome) return outcome;
  if (paRes !== undefined) return 'passed';
  throw ApiError.validation({ outcome: [Msg.blank] });
}

async function stepOf(ctx: Ctx, uid: string) {
  const step = UID.test(uid) ? await threeDSecureStep(ctx, uid) : undefined;
  // Another shop's transaction is as unknown as one that does not exist.
  if (!step || step.shopId !== ctx.shop.id) throw ApiError.notFound();
  return step;
}

const ReturnBody = Type.Object({
  outcome: Type.Optional(
    Type.Union(
      OUTCOMES.map((o) => Type.Literal(o)),
      { description: 'The challenge passed or failed; a frictionless card decides by itself' },
    ),
  ),
  pa_res: Type.Optional(Type.String({ description: 'Counts as passed: the card then decides' })),
  md: Type.Optional(Type.String({ description: 'Accepted and not read' })),
});

export const threeDSecureReturnRoutes: FastifyPluginAsyncTypebox<ThreeDsRouteOptions> = async (app, opts) => {
  // The page's form, forwarded as posted, is as good an answer as the platform clients' JSON.
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 4096 },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );
  app.post(
    '/process/:uid/return',
    {
      config: { errorEnvelope: gatewayErrorBody },
      schema: {
        tags: ['gateway'],
        summary: "Finish a 3-D Secure step with the cardholder's answer, from the shop's server",
        params: Type.Object({ uid: Type.String() }),
        body: ReturnBody,
        response: { 200: TransactionEnvelope, ...gatewayErrors },
      },
    },
    async (request) => {
      const ctx = ctxOf(request);
      const step = await stepOf(ctx, request.params.uid);
      await finishThreeDSecureStep(ctx, step, outcomeOf(request.body), opts.afterThreeDs);
      return { transaction: await getTransaction(ctx, step.uid) };
    },
  );
};
