import { Type } from 'typebox';
import { enforced, withRules } from '../core/schema-check.js';
import { MESSAGES } from '../core/schema-errors.js';
import { Nullable, OptionalText, Text } from '../http/schemas.js';

const US_ZIP = /^\d{5}(-\d{4})?$/;

/**
 * A customer, given alone (`POST /customers`) or inside a subscription. The schema states every
 * rule of one field; the two rules that read the country stay as code beside it.
 */
export const CustomerInput = enforced(
  withRules(
    Type.Object({
      first_name: OptionalText({ maxLength: 255 }),
      last_name: OptionalText({ maxLength: 255 }),
      address: OptionalText({ maxLength: 255 }),
      city: OptionalText({ maxLength: 255 }),
      country: Type.Optional(
        Nullable(Type.String({ maxLength: 2, format: 'country', description: 'ISO 3166-1 alpha-2' })),
      ),
      zip: OptionalText({ maxLength: 16, description: 'NNNNN or NNNNN-NNNN when country is US' }),
      state: Type.Optional(
        Nullable(
          Type.String({
            maxLength: 2,
            pattern: '^[A-Za-z]{2}$',
            description: 'Two letters; only when country is US or CA',
            [MESSAGES]: { pattern: 'must be two letters' },
          }),
        ),
      ),
      phone: OptionalText({ maxLength: 32 }),
      email: Text({ maxLength: 254, format: 'email' }),
      ip: Text({ maxLength: 45, format: 'ip', description: 'IPv4 or IPv6 address of the customer device' }),
    }),
    (customer, check) => {
      const { country, zip, state } = customer;
      if (
        check.passed('zip') &&
        typeof zip === 'string' &&
        zip !== '' &&
        country === 'US' &&
        !US_ZIP.test(zip)
      )
        check.add('zip', 'must be NNNNN or NNNNN-NNNN for the US');
      if (
        check.passed('state') &&
        typeof state === 'string' &&
        state !== '' &&
        country !== 'US' &&
        country !== 'CA'
      )
        check.add('state', 'is allowed only when country is US or CA');
    },
  ),
);
