import { beforeAll, describe, expect, it } from 'vitest';
import {
  card,
  cardBody,
  countRows,
  customer,
  monthly,
  paymentsOf,
  type SubShop,
  subShop,
} from './helpers.js';

let s: SubShop;

beforeAll(async () => {
  s = await subShop();
});

const expect422 = async (body: unknown, expected: unknown) => {
  const res = await s.api.post('/subscriptions', body);
  expect(res.status).toBe(422);
  expect(res.body).toEqual(expected);
};

describe('subscriptions: plan errors', () => {
  it('requires a plan', async () => {
    await expect422({}, { message: "Plan can't be blank", errors: { plan: ["can't be blank"] } });
  });

  it('puts an invalid plan currency under errors.base', async () => {
    await expect422(
      { plan: monthly({ currency: 'XYZ' }) },
      { message: 'Currency XYZ is not supported', errors: { base: ['Currency XYZ is not supported'] } },
    );
  });

  it('puts a plan id unknown to the account under errors.plan.base', async () => {
    await expect422(
      { plan: { id: 'pln_doesnotexist' } },
      {
        message: "Plan with this ID doesn't exist for this account",
        errors: { plan: { base: ["plan with this ID doesn't exist for this account"] } },
      },
    );
  });

  it('nests the field errors of an inline plan under plan', async () => {
    await expect422(
      { plan: { currency: 'EUR', plan: { amount: 0, interval: 1, interval_unit: 'fortnight' } } },
      {
        message:
          "Plan title can't be blank, Plan plan amount must be greater than 0, and Plan plan interval unit is not included in the list",
        errors: {
          plan: {
            title: ["can't be blank"],
            plan: { amount: ['must be greater than 0'], interval_unit: ['is not included in the list'] },
          },
        },
      },
    );
  });

  it('rejects a plan that is not an object', async () => {
    await expect422(
      { plan: 'gold' },
      { message: 'Plan must be an object', errors: { plan: ['must be an object'] } },
    );
  });
});

describe('subscriptions: card errors', () => {
  it.each([
    [{ number: '4200' }, 'number', 'must be 12 to 19 digits'],
    [{ number: '42000000000000000000' }, 'number', 'must be 12 to 19 digits'],
    [{ number: '4200000000000001' }, 'number', 'is not a card number'],
    [{ verification_value: '12' }, 'verification_value', 'must be 3 or 4 digits'],
    [{ verification_value: '12345' }, 'verification_value', 'must be 3 or 4 digits'],
    [{ verification_value: undefined }, 'verification_value', "can't be blank"],
    [{ holder: 'H'.repeat(33) }, 'holder', 'is too long (maximum is 32 characters)'],
    [{ holder: '' }, 'holder', "can't be blank"],
    [{ exp_month: '1' }, 'exp_month', 'must be two digits from 01 to 12'],
    [{ exp_month: '13' }, 'exp_month', 'must be two digits from 01 to 12'],
    [{ exp_year: '30' }, 'exp_year', 'must be four digits'],
  ])('rejects %j under errors.card.%s', async (change, field, msg) => {
    const label = field.replace('_', ' ');
    await expect422(cardBody({ card: card(undefined, change) }), {
      message: `Card ${label} ${msg}`,
      errors: { card: { [field]: [msg] } },
    });
  });

  it('puts an expired card under errors.card.base', async () => {
    await expect422(cardBody({ card: card(undefined, { exp_month: '12', exp_year: '2025' }) }), {
      message: 'Card has expired (valid through 12/2025)',
      errors: { card: { base: ['card has expired (valid through 12/2025)'] } },
    });
  });

  it('reports every missing card field at once', async () => {
    const res = await s.api.post('/subscriptions', cardBody({ card: {} }));
    expect(res.body.errors).toEqual({
      card: {
        number: ["can't be blank"],
        verification_value: ["can't be blank"],
        holder: ["can't be blank"],
        exp_month: ["can't be blank"],
        exp_year: ["can't be blank"],
      },
    });
  });

  it('answers an unknown card token as errors.card.base', async () => {
    await expect422(cardBody({ card: { token: 'no-such-token' } }), {
      message: "Card with this token doesn't exist for this account",
      errors: { card: { base: ["card with this token doesn't exist for this account"] } },
    });
  });

  it('rejects a bad CVC next to a token', async () => {
    await expect422(cardBody({ card: { token: 'x', verification_value: 'abc' } }), {
      message: 'Card verification value must be 3 or 4 digits',
      errors: { card: { verification_value: ['must be 3 or 4 digits'] } },
    });
  });
});

describe('subscriptions: customer and other field errors', () => {
  it('requires a customer in the card variant', async () => {
    await expect422(
      { plan: monthly(), card: card() },
      { message: "Customer can't be blank", errors: { customer: ["can't be blank"] } },
    );
  });

  it('nests customer data errors under customer', async () => {
    await expect422(cardBody({ customer: { email: 'nope' } }), {
      message: "Customer email is invalid and Customer ip can't be blank",
      errors: { customer: { email: ['is invalid'], ip: ["can't be blank"] } },
    });
  });

  it('puts a customer id unknown to the account under errors.customer.base', async () => {
    await expect422(cardBody({ customer: { id: 'cst_nope' } }), {
      message: "Customer with this ID doesn't exist for this account",
      errors: { customer: { base: ["customer with this ID doesn't exist for this account"] } },
    });
  });

  it('rejects a tracking_id longer than 255 characters', async () => {
    await expect422(
      { plan: monthly(), tracking_id: 't'.repeat(256) },
      {
        message: 'Tracking id is too long (maximum is 255 characters)',
        errors: { tracking_id: ['is too long (maximum is 255 characters)'] },
      },
    );
  });

  it('checks languages, URLs and the types of the free-form fields, all at once', async () => {
    await expect422(
      {
        plan: monthly(),
        language: 'xx',
        settings: { language: 'yy' },
        return_url: 'javascript:alert(1)',
        notification_url: 'shop.example/hook',
        additional_data: [1],
        avs_cvc_verification: 'on',
        receipt_text: 'thanks',
        device_id: 5,
      },
      {
        message:
          'Device id must be a string, Return url must be an absolute http(s) URL, Notification url must be an absolute http(s) URL, Additional data must be an object, Avs cvc verification must be an object, Receipt text must be an array of strings, Language is not included in the list, and Settings language is not included in the list',
        errors: {
          device_id: ['must be a string'],
          return_url: ['must be an absolute http(s) URL'],
          notification_url: ['must be an absolute http(s) URL'],
          additional_data: ['must be an object'],
          avs_cvc_verification: ['must be an object'],
          settings: { language: ['is not included in the list'] },
          receipt_text: ['must be an array of strings'],
          language: ['is not included in the list'],
        },
      },
    );
  });

  it('rejects a body that is not an object', async () => {
    const res = await s.api.post('/subscriptions', '[1]');
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      message: 'Request body must be a JSON object',
      errors: { base: ['Request body must be a JSON object'] },
    });
  });

  it('writes nothing for a rejected request: no plan, customer, subscription or payment', async () => {
    const own = await subShop();
    const res = await own.api.post('/subscriptions', {
      plan: monthly({ currency: 'XYZ' }),
      customer: customer(),
      card: card(),
    });
    expect(res.status).toBe(422);
    for (const table of ['subscriptions', 'plans', 'customers'] as const)
      expect(await countRows(own.h, table, own.shop)).toBe(0);
    expect(await paymentsOf(own.h, own.shop)).toEqual([]);
  });
});

describe('subscriptions: read, list and cancel errors', () => {
  it('answers 404 for an unknown subscription', async () => {
    const notFound = { message: 'Record not found', errors: { base: ['Record not found'] } };
    const get = await s.api.get('/subscriptions/sbs_doesnotexist');
    expect(get.status).toBe(404);
    expect(get.body).toEqual(notFound);
    const cancel = await s.api.post('/subscriptions/sbs_doesnotexist/cancel', { cancel_reason: 'x' });
    expect(cancel.status).toBe(404);
    expect(cancel.body).toEqual(notFound);
  });

  it('requires cancel_reason', async () => {
    const created = await s.api.post('/subscriptions', { plan: monthly() });
    for (const body of [{}, { cancel_reason: '' }, { cancel_reason: '   ' }, { cancel_reason: null }]) {
      const res = await s.api.post(`/subscriptions/${created.body.id}/cancel`, body);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        message: "Cancel reason can't be blank",
        errors: { cancel_reason: ["can't be blank"] },
      });
    }
    const typed = await s.api.post(`/subscriptions/${created.body.id}/cancel`, { cancel_reason: 5 });
    expect(typed.body).toEqual({
      message: 'Cancel reason must be a string',
      errors: { cancel_reason: ['must be a string'] },
    });
    expect((await s.api.get(`/subscriptions/${created.body.id}`)).body.state).toBe('redirecting');
  });

  it('refuses to cancel a cancelled subscription a second time', async () => {
    const created = await s.api.post('/subscriptions', { plan: monthly() });
    const first = await s.api.post(`/subscriptions/${created.body.id}/cancel`, { cancel_reason: 'first' });
    const again = await s.api.post(`/subscriptions/${created.body.id}/cancel`, { cancel_reason: 'second' });
    expect(again.status).toBe(422);
    expect(again.body).toEqual({
      message: 'Subscription is already canceled',
      errors: { base: ['Subscription is already canceled'] },
    });
    expect((await s.api.get(`/subscriptions/${created.body.id}`)).body).toEqual(first.body);
  });

  it('refuses to cancel a failed subscription', async () => {
    const failed = await s.api.post('/subscriptions', cardBody({ card: card('4005550000000019') }));
    const res = await s.api.post(`/subscriptions/${failed.body.id}/cancel`, { cancel_reason: 'x' });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      message: 'Subscription is already failed and cancelled',
      errors: { base: ['Subscription is already failed and cancelled'] },
    });
    expect((await s.api.get(`/subscriptions/${failed.body.id}`)).body).toEqual(failed.body);
  });

  it.each([
    ['state=bogus', { state: ['is not included in the list'] }],
    ['limit=0', { limit: ['must be a whole number from 1 to 100'] }],
    ['starting_after=sbs_unknown', { starting_after: ['does not name an object of this list'] }],
  ])('rejects the list query %s', async (query, errors) => {
    const res = await s.api.get(`/subscriptions?${query}`);
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual(errors);
  });
});
