import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Ctx } from '../context.js';
import { ApiError, ErrorCollector } from '../core/errors.js';
import { Msg } from '../core/rules.js';
import { checkBody, enforced, type RuleCheck, withRules } from '../core/schema-check.js';
import { ctxOf } from '../http/ctx.js';
import { Nullable } from '../http/schemas.js';
import { gatewayErrorBody } from './error-body.js';
import { getTransaction } from './query.js';
import { gatewayErrors, TransactionEnvelope } from './schemas.js';
import { type ThreeDsOutcome, threeDSecureStep, UID } from './three-ds.js';
import { finishThreeDSecureStep, type ThreeDsRouteOptions } from './three-ds-finish.js';

/**
 * `POST /process/{uid}/return`: the shop's server finishes the cardholder's 3-D Secure step with the
 * answer the cardholder brought back (the platform's clients call it `finalize_3ds`). Unlike the page
 * it needs the shop's credentials, and answers the transaction as JSON instead of sending a browser
 * on: the caller is a program that reads `status`.
 */

const OUTCOMES = ['passed', 'failed', 'cancelled'] as const;

/** Neither an outcome nor a PaRes: the outcome is what is missing. */
function someAnswer(body: Record<string, unknown>, check: RuleCheck): void {
  const blank = (v: unknown) => v === undefined || v === null || v === '';
  if (blank(body.outcome) && blank(body.pa_res) && check.passed('outcome') && check.passed('pa_res'))
    check.add('outcome', Msg.blank);
}

/**
 * The cardholder's answer: `outcome` as the page's form posts it, or the platform's `pa_res` (the
 * issuer's answer to the challenge). The sandbox has no issuer to read a PaRes, so a PaRes means the
 * cardholder went through the step, and the card's own result applies, as for `passed`.
 */
const ReturnBody = enforced(
  withRules(
    Type.Object({
      outcome: Type.Optional(
        Nullable(
          Type.Enum(OUTCOMES, {
            type: 'string',
            description:
              "The challenge passed or failed; a frictionless card decides by itself. `cancelled`: the shop ends the step (the transaction fails with 'This payment was cancelled by the shop')",
          }),
        ),
      ),
      pa_res: Type.Optional(
        Nullable(
          Type.String({ description: 'Counts as passed (the card then decides); needed without outcome' }),
        ),
      ),
      md: Type.Optional(Nullable(Type.String({ description: 'Accepted and not read' }))),
    }),
    someAnswer,
  ),
);

function outcomeOf(body: unknown): ThreeDsOutcome {
  const errors = new ErrorCollector();
  if (!checkBody(ReturnBody, body, errors)) errors.throwIfAny();
  const { outcome } = body as Record<string, unknown>;
  return outcome === 'failed' || outcome === 'cancelled' ? outcome : 'passed';
}

async function stepOf(ctx: Ctx, uid: string) {
  const step = UID.test(uid) ? await threeDSecureStep(ctx, uid) : undefined;
  // Another shop's transaction is as unknown as one that does not exist.
  if (!step || step.shopId !== ctx.shop.id) throw ApiError.notFound();
  return step;
}

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
      // Another Kopek deployment ends a step with its GATEWAY_TOKEN credential (a cancel ends the
      // open charge: charging/send.ts). Phased when keyed: no transaction is held across the
      // settling of the subscription, which may ask a remote gateway; a retry finishes nothing twice.
      config: { errorEnvelope: gatewayErrorBody, serviceCredential: true, idempotency: 'phased' },
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
