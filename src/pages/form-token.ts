import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { keyringOf, type MasterKeys } from '../crypto/keyring.js';
import { deriveKey } from '../crypto/secretbox.js';
import { PageProblem } from './scope.js';

/**
 * The CSRF token of a form that must work inside another site's frame (the payment form and its
 * 3-D Secure step, docs/embedding.md), where browsers keep no cookie of this origin: no cookie at
 * all, an HMAC under a key derived from the master key, bound to the page's reference (the checkout
 * token, the transaction uid), to what the form is for, and to when it was shown.
 *
 * Why this is as strong as the cookie's token at the top level: another site can read neither, and
 * forges neither without the server's key. These forms hold no session and no cookie-borne authority:
 * the page's reference is the capability, and whoever holds it can open the page (and read its
 * token) anyway; the token ties a post to a form this server showed for that page, within a week.
 * Every instance derives the same key from the master key, so any of them checks any form; after a
 * master key rotation, forms shown under the previous key still pass.
 */

/** How long a shown form may be posted. */
export const FORM_TOKEN_TTL_MS = 7 * 24 * 60 * 60 * 1000;

const PURPOSE = 'page-form-token';

function keysOf(masterKey: MasterKeys): Buffer[] {
  const ring = keyringOf(masterKey);
  return [ring.currentKey, ...ring.previousKeys].map((k) => deriveKey(k, PURPOSE));
}

function mac(key: Buffer, form: string, reference: string, issued: number): string {
  return createHmac('sha256', key).update(`${form}\0${reference}\0${issued}`).digest('base64url');
}

/** The token of form `form` (e.g. `checkout`) on the page of `reference`, shown at `now`. */
export function formToken(masterKey: MasterKeys, form: string, reference: string, now: Date): string {
  const issued = Math.floor(now.getTime() / 1000);
  return `${issued}.${mac(keysOf(masterKey)[0] as Buffer, form, reference, issued)}`;
}

/** Whether `token` is one this server made for form `form` on the page of `reference`, still valid at `now`. */
export function isFormToken(
  masterKey: MasterKeys,
  form: string,
  reference: string,
  token: unknown,
  now: Date,
): boolean {
  if (typeof token !== 'string') return false;
  const m = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!m) return false;
  const issued = Number(m[1]);
  const age = now.getTime() - issued * 1000;
  // A little tolerance for clocks of instances a second apart; none for a form from the future.
  if (age < -60_000 || age > FORM_TOKEN_TTL_MS) return false;
  const given = Buffer.from(m[2] as string);
  return keysOf(masterKey).some((key) => {
    const expected = Buffer.from(mac(key, form, reference, issued));
    return expected.length === given.length && timingSafeEqual(expected, given);
  });
}

/** Refuses (403, "this form has expired") a post whose `_csrf` is not the form's token for `reference`. */
export function checkFormToken(request: FastifyRequest, form: string, reference: string, now: Date): void {
  const body = (request.body ?? {}) as Record<string, unknown>;
  if (!isFormToken(request.server.services.masterKey, form, reference, body._csrf, now))
    throw new PageProblem(403, 'expiredForm');
}
