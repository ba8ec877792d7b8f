/** What the CLI prints that more than one command prints: the usage and a new shop. */
import type { ShopShown } from '../control/commands.js';

export const USAGE = `Usage: kopek <command>

Commands:
  serve                      start the API, hosted pages and gateway (migrates first)
  migrate                    apply pending database migrations and exit
  shop create [--id N] [--secret HEX64] [--3ds] [--test] [--name NAME]
                             create a shop; prints its id, secret key and notification public key
  shop list                  list shops
  shop update N [--3ds on|off] [--email-notifications on|off] [--notification-email ADDRESS|none]
                [--return-url URL|none] [--time-zone ZONE] [--notification-auth basic|signature]
                             change a shop's settings; prints them
  shop rotate-key N          give a shop a new secret key (prints it once; the old one stops working)
  shop rotate-webhook-secret N
                             a new webhook signing secret; the old one signs beside it for 24 hours
  shop rotate-signing-key N  a new notification key pair, pending; prints its public key
  shop confirm-signing-key N sign notifications with the pending key pair from now on
  bill                       bill everything due now, once; prints what it did
  keys rotate [--batch-size N]
                             re-seal everything sealed with a previous master key under the current one,
                             while Kopek runs; prints what is left and when the previous key can go
  clock show --shop N        show a test shop's clock
  clock advance --shop N (--by DURATION | --to INSTANT)
                             move a test shop's clock forward (e.g. --by P1M, --to 2027-01-31T10:00:00Z),
                             billing in order everything due on the way; prints what ran

Configuration comes from environment variables; see docs/operations.md.`;

/** Said on a store without shops; `cli` is the command that runs Kopek's CLI where the operator is. */
export function noShopsText(cli: string): string {
  return `No shops yet. Create one (its secret key is printed once) with:
  ${cli} shop create --name 'My shop'          (add --test for a test shop)`;
}

export function shopText(shop: ShopShown): string {
  const { secret } = shop;
  return [
    `Shop id:     ${shop.id}${shop.test ? ' (test)' : ''}${shop.threeDs ? ' (3-D Secure on)' : ''}`,
    `Secret key:  ${secret}   (shown once; keep it safe)`,
    'Notification public key (verifies Content-Signature):',
    shop.publicKey.trim(),
    '\nTry it:',
    `  curl -u ${shop.id}:${secret} -H 'Content-Type: application/json' ${shop.publicUrl}/customers -d '{"email":"jane@example.com","ip":"203.0.113.7"}'`,
  ].join('\n');
}
