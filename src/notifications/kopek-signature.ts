import { createHmac } from 'node:crypto';

/**
 * The Kopek-Signature header: `t=<unix seconds>,v1=<hex>[,v1=<hex>]`, each v1 an HMAC-SHA256 over
 * `<t>.<raw body>` with one of the shop's webhook secrets (the new one first while a rotated one
 * still signs). The time is inside what is signed, so a receiver that refuses an old `t` refuses a
 * replayed notification. A few microseconds each: made on the event loop.
 */

export const KOPEK_SIGNATURE_HEADER = 'Kopek-Signature';

export function kopekSignature(t: number, body: string, secrets: readonly string[]): string {
  let header = `t=${t}`;
  for (const secret of secrets) {
    header += `,v1=${createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex')}`;
  }
  return header;
}

/**
 * Whether notifications to `url` carry HTTP Basic with the shop's secret key: only for shops that
 * chose `basic`, and only over https, where no one on the path reads it. Anything that does not
 * plainly start with https: (http:, odd spellings) goes without.
 */
export const sendsBasic = (auth: string, url: string): boolean =>
  auth === 'basic' && /^https:\/\//i.test(url);
