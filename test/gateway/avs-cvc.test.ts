import { beforeAll, describe, expect, it } from 'vitest';
import { AVS_TEST_DATA, CVC_TEST_DATA } from '../../src/gateway/test-cards.js';
import { card, type GatewayShop, gatewayShop } from './helpers.js';

let g: GatewayShop;

beforeAll(async () => {
  g = await gatewayShop();
});

const AVS = [
  ...AVS_TEST_DATA.map((r) => ({
    address: `${r.addressDigit} Main Street 9`,
    zip: `${r.zipDigit}0987`,
    code: r.code,
  })),
  { address: '6 Main Street', zip: '60000', code: '1' },
  { address: 'No digits here', zip: 'LV-ABC', code: '1' },
];
const CVC = [...CVC_TEST_DATA, { cvc: '123', code: '1' }, { cvc: '9876', code: '1' }];

describe('AVS/CVC verification test data', () => {
  it('answers every AVS and CVC combination with the documented result codes', async () => {
    for (const avs of AVS) {
      for (const cvc of CVC) {
        const res = await g.pay({
          credit_card: card('4200000000000000', { verification_value: cvc.cvc }),
          billing_address: { address: avs.address, zip: avs.zip, country: 'US' },
        });
        expect(res.body.transaction.avs_cvc_verification, `${avs.address} / ${avs.zip} / ${cvc.cvc}`).toEqual(
          {
            avs_verification: { result_code: avs.code },
            cvc_verification: { result_code: cvc.code },
          },
        );
        expect(res.body.transaction.status).toBe('successful');
      }
    }
  });

  it('answers 1 for both without a billing address and without a CVC (a token alone)', async () => {
    const paid = await g.authorize();
    expect(paid.body.transaction.avs_cvc_verification).toEqual({
      avs_verification: { result_code: '1' },
      cvc_verification: { result_code: '1' },
    });
    const byToken = await g.pay({ credit_card: { token: paid.body.transaction.credit_card.token } });
    expect(byToken.body.transaction.avs_cvc_verification.cvc_verification.result_code).toBe('1');
  });

  it('declines when a result code is among the rejection codes of the request', async () => {
    const res = await g.pay({
      billing_address: { address: '2 Elm', zip: '22000' },
      avs_cvc_verification: { avs_verification: { rejection_codes: ['N', 'B'] } },
    });
    expect(res.body.transaction).toMatchObject({
      status: 'failed',
      message: 'Payment was declined by AVS/CVC verification',
      avs_cvc_verification: { avs_verification: { result_code: 'N' } },
    });
    const cvc = await g.pay({
      credit_card: card('4200000000000000', { verification_value: '222' }),
      avs_cvc_verification: { cvc_verification: { rejection_codes: ['N'] } },
    });
    expect(cvc.body.transaction.status).toBe('failed');
  });

  it('does not decline when the code is not listed, or the verification is skipped', async () => {
    const other = await g.pay({
      billing_address: { address: '1 Elm', zip: '10000' },
      avs_cvc_verification: { avs_verification: { rejection_codes: ['N'] } },
    });
    expect(other.body.transaction.status).toBe('successful');
    const skipped = await g.pay({
      billing_address: { address: '2 Elm', zip: '20000' },
      avs_cvc_verification: { avs_verification: { skip_verification: true, rejection_codes: ['N'] } },
    });
    expect(skipped.body.transaction.status).toBe('successful');
  });

  it('refuses rejection codes that are not a list of strings', async () => {
    const res = await g.pay({ avs_cvc_verification: { cvc_verification: { rejection_codes: 'N' } } });
    expect(res.status).toBe(422);
    expect(res.body.response.errors).toEqual({
      avs_cvc_verification: { cvc_verification: { rejection_codes: ['must be an array of strings'] } },
    });
  });
});
