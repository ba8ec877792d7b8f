import { Type } from 'typebox';
import { AddressMsg, addressProblems, hasStates, stateMessage } from '../core/address.js';
import { enforced, withRules } from '../core/schema-check.js';
import { MESSAGES } from '../core/schema-errors.js';
import { Nullable, OptionalText, Text } from '../http/schemas.js';

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
        Nullable(
          Type.String({
            maxLength: 2,
            format: 'country',
            description: 'ISO 3166-1 alpha-2, in any case; kept in upper case',
          }),
        ),
      ),
      zip: OptionalText({ maxLength: 16, description: 'NNNNN or NNNNN-NNNN when country is US' }),
      state: Type.Optional(
        Nullable(
          Type.String({
            maxLength: 2,
            pattern: '^[A-Za-z]{2}$',
            description:
              'Only when country is US or CA: the code of a US state, DC or territory, or of a Canadian province or territory, in any case; kept in upper case',
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
      const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
      // The shared address rules (core/address.ts), on the fields the schema let through.
      const problems = addressProblems({
        country: check.passed('country') ? text(country) : undefined,
        state: check.passed('state') ? text(state) : undefined,
        zip: check.passed('zip') ? text(zip) : undefined,
      });
      if (problems.has('zip')) check.add('zip', AddressMsg.usZip);
      if (problems.has('state')) check.add('state', stateMessage(String(country)));
      if (check.passed('state') && text(state) !== undefined && !hasStates(text(country)))
        check.add('state', AddressMsg.stateOnlyUsCa);
    },
  ),
);
