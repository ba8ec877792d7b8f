import { AcquirerMsg, ChargeMsg } from '../gateway/index.js';
import type { PageLang } from '../pages/lang.js';

/**
 * The bank's answer as a buyer reads it. The gateway's messages are the platform's English sentences
 * (its clients compare them, so they stay English in the API); a page in another language shows the
 * known ones translated, and any other in a translated line that quotes the bank's own words.
 */

const RU: Record<string, string> = {
  [AcquirerMsg.declined]: 'банк отклонил платёж',
  [AcquirerMsg.authorizationDeclined]: 'банк отклонил авторизацию',
  [AcquirerMsg.insufficientFunds]: 'недостаточно средств на карте',
  [AcquirerMsg.providerError]: 'ошибка на стороне платёжной системы; попробуйте позже',
  [AcquirerMsg.threeDsFailed]: 'проверка 3-D Secure не пройдена',
  [AcquirerMsg.cancelledByShop]: 'магазин отменил этот платёж',
  [AcquirerMsg.creditDeclined]: 'банк отклонил зачисление',
  [AcquirerMsg.expired]: 'срок действия карты истёк',
  [ChargeMsg.avsCvcRejected]: 'платёж отклонён проверкой адреса или CVC',
  'Authentication Failed': 'проверка 3-D Secure не пройдена',
  'Authentication Rejected': 'проверка 3-D Secure отклонена',
  'Authentication Unavailable': 'проверка 3-D Secure недоступна',
};

/** The subscription's own reasons wrap the bank's message: "First payment failed: Insufficient funds". */
const FIRST_PAYMENT = /^First payment (failed|error|refused by the gateway): (.*)$/s;
const NEVER_REACHED = 'First payment could not be completed: it never reached the gateway';

function ruMessage(message: string): string {
  const known = RU[message] ?? RU[message.replace(/\.$/, '')];
  if (known) return known;
  if (message === NEVER_REACHED) return 'платёж не дошёл до банка, деньги не списаны';
  const wrapped = FIRST_PAYMENT.exec(message);
  if (wrapped?.[2]) return ruMessage(wrapped[2]);
  return `банк отклонил операцию (ответ банка: «${message}»)`;
}

/** The bank's (or gateway's) message in the page's language; empty stays empty. */
export function bankMessage(message: string | null | undefined, lang: PageLang): string {
  if (!message) return '';
  return lang === 'ru' ? ruMessage(message) : message;
}
