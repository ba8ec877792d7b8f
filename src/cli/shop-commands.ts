/**
 * The CLI side of `kopek shop update` and `kopek clock show|advance`: options in, text out. The work
 * is a store command (shop-commands.ts), run here or in the server that holds the store.
 */
import { parseArgs } from 'node:util';
import type { BillingSummary, TestClockView } from '../billing/index.js';
import { ShopInputError, type ShopSettingsView } from '../shops/index.js';
import type { CliContext, CliIo } from './context.js';

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** What a billing run did, in one sentence (`kopek bill` and `kopek clock advance`). */
export function describeBilling(s: BillingSummary): string {
  return `${plural(s.charged, 'charge attempt')} (${s.successful} successful, ${s.failed} failed, ${s.errors} error, ${s.unknown} unknown); ${plural(s.resolved, 'open attempt')} resolved; ${plural(s.ended, 'subscription')} ended after their last cycle.`;
}

function shopIdArg(text: string | undefined, option: string): number {
  if (text === undefined || !/^\d{1,10}$/.test(text)) throw new ShopInputError(`${option} must be a shop id`);
  return Number(text);
}

/** "365 days 2 h 5 min": how far a test clock runs ahead of real time. */
function aheadBy(seconds: number): string {
  // Rounded to the minute: an advance lands the clock on its target, so the offset is short by the
  // real time the advance took (a second or more on a busy machine), which is not worth a line.
  const s = Math.round(seconds / 60) * 60;
  const parts = [
    [Math.floor(s / 86_400), 'day'],
    [Math.floor((s % 86_400) / 3600), 'h'],
    [Math.floor((s % 3600) / 60), 'min'],
  ] as const;
  const shown = parts
    .filter(([n]) => n > 0)
    .map(([n, unit]) => (unit === 'day' ? plural(n, 'day') : `${n} ${unit}`));
  return shown.length > 0 ? `${shown.join(' ')} ahead of real time` : 'on real time';
}

const clockLine = (shop: number, c: TestClockView) =>
  `Shop ${shop} test clock: ${c.now} (time zone ${c.time_zone}), ${aheadBy(c.offset_seconds)}`;

export async function clockCommand(
  { io, store }: CliContext,
  sub: 'show' | 'advance',
  args: string[],
): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { shop: { type: 'string' }, by: { type: 'string' }, to: { type: 'string' } },
    strict: true,
  });
  const shop = shopIdArg(values.shop, '--shop');
  if (sub === 'show') {
    if (values.by !== undefined || values.to !== undefined)
      throw new ShopInputError('clock show takes --shop only; to move the clock use clock advance');
    io.out(clockLine(shop, await store('clock show', { shop })));
    return 0;
  }
  if ((values.by === undefined) === (values.to === undefined))
    throw new ShopInputError('clock advance takes exactly one of --by DURATION and --to INSTANT');
  const input = { shop, ...(values.by !== undefined ? { by: values.by } : { to: values.to as string }) };
  const done = await store('clock advance', input);
  io.out(`Advanced from ${done.advanced_from}`);
  io.out(clockLine(shop, done.test_clock));
  io.out(`Billed in ${plural(done.billing.runs, 'run')}: ${describeBilling(done.billing)}`);
  return 0;
}

function onOff(text: string | undefined, option: string): boolean | undefined {
  if (text === undefined) return undefined;
  if (text === 'on' || text === 'off') return text === 'on';
  throw new ShopInputError(`${option} must be on or off`);
}

/** "none" clears a setting that may be empty. */
const orNone = (text: string | undefined) => (text === 'none' ? null : text);

export async function shopUpdateCommand({ io, store }: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      '3ds': { type: 'string' },
      'email-notifications': { type: 'string' },
      'notification-email': { type: 'string' },
      'return-url': { type: 'string' },
      'time-zone': { type: 'string' },
      'notification-auth': { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length !== 1)
    throw new ShopInputError('shop update takes one shop id: shop update N [options]');
  const shop = shopIdArg(positionals[0], 'shop update N: N');
  const given = {
    three_d_secure: onOff(values['3ds'], '--3ds'),
    email_notifications: onOff(values['email-notifications'], '--email-notifications'),
    notification_email: orNone(values['notification-email']),
    return_url: orNone(values['return-url']),
    time_zone: values['time-zone'],
    notification_auth: values['notification-auth'],
  };
  const settings = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined));
  printSettings(io, await store('shop update', { shop, settings }));
  return 0;
}

export async function rotateKeyCommand({ io, store }: CliContext, args: string[]): Promise<number> {
  const { positionals } = parseArgs({ args, options: {}, allowPositionals: true, strict: true });
  if (positionals.length !== 1)
    throw new ShopInputError('shop rotate-key takes one shop id: shop rotate-key N');
  const shop = shopIdArg(positionals[0], 'shop rotate-key N: N');
  const { secret } = await store('shop rotate-key', { shop });
  io.out(`Shop id:     ${shop}`);
  io.out(`Secret key:  ${secret}   (shown once; the old key no longer works)`);
  return 0;
}

/** `shop rotate-webhook-secret N`, `shop rotate-signing-key N`, `shop confirm-signing-key N`. */
export const NOTIFICATION_KEY_COMMANDS = [
  'rotate-webhook-secret',
  'rotate-signing-key',
  'confirm-signing-key',
] as const;

export async function notificationKeyCommand(
  { io, store }: CliContext,
  sub: (typeof NOTIFICATION_KEY_COMMANDS)[number],
  args: string[],
): Promise<number> {
  const { positionals } = parseArgs({ args, options: {}, allowPositionals: true, strict: true });
  if (positionals.length !== 1) throw new ShopInputError(`shop ${sub} takes one shop id: shop ${sub} N`);
  const shop = shopIdArg(positionals[0], `shop ${sub} N: N`);
  const s = await store(`shop ${sub}`, { shop });
  if (sub === 'rotate-webhook-secret') {
    io.out(`Shop ${shop} webhook signing secret: ${s.webhook_secret}`);
    if (s.webhook_secret_previous_until !== null)
      io.out(`The previous secret signs too until ${s.webhook_secret_previous_until} (the shop's clock).`);
  } else if (sub === 'rotate-signing-key') {
    io.out(`Shop ${shop} new notification public key, pending (the current key signs until you confirm):`);
    io.out((s.pending_public_key ?? '').trim());
    io.out(`Confirm it with: kopek shop confirm-signing-key ${shop}`);
  } else {
    io.out(`Shop ${shop} notifications are signed with this public key from now on:`);
    io.out(s.public_key.trim());
  }
  return 0;
}

function printSettings(io: CliIo, s: ShopSettingsView): void {
  const rows: [string, string][] = [
    ['3-D Secure', s.three_d_secure ? 'on' : 'off'],
    ['E-mail notifications', s.email_notifications ? 'on' : 'off'],
    ['Notification e-mail', s.notification_email ?? 'none'],
    ['Return URL', s.return_url ?? 'none'],
    ['Time zone', s.time_zone],
    ['Retry schedule', s.retry_schedule ? JSON.stringify(s.retry_schedule) : "the platform's rule"],
    ['Quiet hours', s.quiet_hours ? `${s.quiet_hours.start} to ${s.quiet_hours.end}` : 'none'],
    ['Notification auth', s.notification_auth],
    ['Pending signing key', s.pending_public_key === null ? 'none' : 'yes (confirm-signing-key)'],
  ];
  io.out(`Shop ${s.id}${s.test ? ' (test)' : ''}: ${s.name}`);
  for (const [label, value] of rows) io.out(`  ${`${label}:`.padEnd(22)}${value}`);
}
