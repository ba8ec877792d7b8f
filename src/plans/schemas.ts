import { Type } from 'typebox';
import { INTERVAL_UNITS } from '../calendar/interval.js';
import { LANGUAGES } from '../core/rules.js';
import { Nullable } from '../http/schemas.js';

/**
 * Plan schemas, apart from the routes so a subscription's schemas can embed them. Request bodies
 * are validated by the verbs; these document them and type the handlers.
 */

const Unit = Type.Union(
  INTERVAL_UNITS.map((u) => Type.Literal(u)),
  { description: 'hour, day, week, month or year' },
);
const Amount = Type.Union([Type.Integer(), Type.String()], {
  description: 'Minor units; a numeric string is accepted and returned as an integer',
});

const PriceInput = Type.Object({
  amount: Amount,
  interval: Type.Integer({ minimum: 1 }),
  interval_unit: Unit,
});

export const PlanInput = Type.Object({
  title: Type.String(),
  currency: Type.String({ description: 'ISO 4217 alpha-3 code (no crypto codes for plans)' }),
  plan: PriceInput,
  trial: Type.Optional(
    Nullable(
      Type.Object({
        amount: Amount,
        interval: Type.Integer({ minimum: 1 }),
        interval_unit: Unit,
        as_first_payment: Type.Optional(Type.Boolean({ default: false })),
      }),
    ),
  ),
  language: Type.Optional(
    Type.Union(
      LANGUAGES.map((l) => Type.Literal(l)),
      { default: 'en' },
    ),
  ),
  infinite: Type.Optional(Type.Boolean({ default: true })),
  billing_cycles: Type.Optional(
    Nullable(Type.Integer({ minimum: 1, description: 'Required when infinite is false; ignored otherwise' })),
  ),
  number_payment_attempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, default: 3 })),
  test: Type.Optional(Type.Boolean({ description: "Default: the shop's test mode" })),
  shop_id: Type.Optional(
    Type.Union([Type.Integer(), Type.String()], { description: 'Must be the authenticated shop' }),
  ),
});

const Price = Type.Object({ amount: Type.Integer(), interval: Type.Integer(), interval_unit: Type.String() });

export const PlanSchema = Type.Object(
  {
    id: Type.String(),
    title: Type.String(),
    currency: Type.String(),
    plan: Price,
    trial: Nullable(
      Type.Object({
        amount: Type.Integer(),
        interval: Type.Integer(),
        interval_unit: Type.String(),
        as_first_payment: Type.Boolean(),
      }),
    ),
    language: Type.String(),
    infinite: Type.Boolean(),
    billing_cycles: Nullable(Type.Integer()),
    number_payment_attempts: Type.Integer(),
    test: Type.Boolean(),
    shop_id: Type.Integer(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Plan' },
);
