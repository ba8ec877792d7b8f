import type { ComponentChildren } from 'preact';
import { AcquirerMsg, ChargeMsg, PROCESSED } from '../gateway/index.js';
import type { PageLang } from '../pages/lang.js';

/**
 * What the cabinet shows as the API wrote it, in any language: machine names (event names, header
 * names, time zone ids, JSON) marked `translate="no"`, and the platform's English messages, which the
 * API must keep, shown on a Russian page in Russian with the English original beside them (marked
 * `lang="en"`, so screen readers and translators know what they read).
 */

/** HTML's own mark for what is not to be translated (preact types `translate` as a boolean). */
export const NO_TRANSLATE = { translate: 'no' } as Record<string, string>;

/** A machine name or text kept as it is: never translated. */
export function Code({ children, class: className }: { children: ComponentChildren; class?: string }) {
  return (
    <code class={className} {...NO_TRANSLATE}>
      {children}
    </code>
  );
}

/** A block of machine text (JSON, headers, a key): kept as it is. */
export function Verbatim({ children, class: className }: { children: ComponentChildren; class?: string }) {
  return (
    <pre class={className} {...NO_TRANSLATE}>
      {children}
    </pre>
  );
}

/** The gateway's, the acquirer's and the subscriptions' own English messages, in Russian. */
const RU_MESSAGES: Record<string, string> = {
  [PROCESSED]: 'Успешно обработано',
  'Payment was approved': 'Платёж одобрен',
  'Authorization was approved': 'Авторизация одобрена',
  'Capture was approved': 'Списание одобрено',
  'Void was approved': 'Отмена авторизации одобрена',
  'Refund was approved': 'Возврат одобрен',
  'Credit was approved': 'Зачисление одобрено',
  [AcquirerMsg.declined]: 'Банк отклонил платёж',
  [AcquirerMsg.authorizationDeclined]: 'Банк отклонил авторизацию',
  [AcquirerMsg.insufficientFunds]: 'Недостаточно средств на карте',
  [AcquirerMsg.providerError]: 'Ошибка на стороне платёжной системы',
  [AcquirerMsg.threeDsFailed]: 'Проверка 3-D Secure не пройдена',
  [AcquirerMsg.creditDeclined]: 'Банк отклонил зачисление',
  [AcquirerMsg.expired]: 'Срок действия карты истёк',
  [ChargeMsg.avsCvcRejected]: 'Платёж отклонён проверкой адреса или CVC',
  'Authentication Failed': 'Проверка 3-D Secure не пройдена',
  'Authentication Rejected': 'Проверка 3-D Secure отклонена',
  'Authentication Unavailable': 'Проверка 3-D Secure недоступна',
  'Proof matches the transaction': 'Подтверждение совпадает с транзакцией',
  'First payment could not be completed: it never reached the gateway':
    'Первый платёж не выполнен: он не дошёл до шлюза',
  'no message': 'без сообщения',
};

/** A subscription's reason wraps the gateway's message: "First payment failed: Payment was declined". */
const WRAPPED = /^(First payment|Card verification) (failed|error|refused by the gateway): (.*)$/s;
const RU_WHAT: Record<string, string> = {
  failed: 'не прошла',
  error: 'завершилась ошибкой',
  'refused by the gateway': 'отклонена шлюзом',
};

/** The Russian text of a message the platform writes in English; undefined for one it does not know. */
export function russianMessage(message: string): string | undefined {
  const known = RU_MESSAGES[message] ?? RU_MESSAGES[message.replace(/\.$/, '')];
  if (known) return known;
  const wrapped = WRAPPED.exec(message);
  if (!wrapped) return undefined;
  const [, first, what, inner] = wrapped as unknown as [string, string, string, string];
  const subject = first === 'First payment' ? 'Первая оплата' : 'Проверка карты';
  const said = russianMessage(inner);
  return said ? `${subject} ${RU_WHAT[what] ?? what}: ${said}` : undefined;
}

/**
 * A message of the gateway (or of a subscription's reason): as it is on an English page; on a
 * Russian one in Russian, with the platform's English words beside it, or those alone (marked as
 * English) when there is no translation of them.
 */
export function GatewayMessage({ message, lang }: { message: string | null | undefined; lang: PageLang }) {
  if (!message) return <span class="muted">—</span>;
  if (lang === 'en') return <>{message}</>;
  const ru = russianMessage(message);
  if (!ru)
    return (
      <span lang="en" class="api-message">
        {message}
      </span>
    );
  return (
    <>
      {ru}{' '}
      <span class="muted api-message" lang="en">
        ({message})
      </span>
    </>
  );
}

/** What an event is, in Russian, beside its name in the API. */
const RU_EVENTS: Record<string, string> = {
  'created.subscription': 'Подписка создана',
  'activated.subscription': 'Подписка активна',
  'renewed.subscription': 'Подписка продлена',
  'trial_started.subscription': 'Пробный период начался',
  'failed.subscription': 'Списание не прошло',
  'canceled.subscription': 'Подписка отменена',
  'checkout_expired.subscription': 'Ссылка на оплату истекла',
  'expired.checkout': 'Ссылка на оплату истекла',
  'successful.transaction': 'Транзакция успешна',
  'failed.transaction': 'Транзакция отклонена',
  'incomplete.transaction': 'Транзакция не завершена',
  'error.transaction': 'Транзакция с ошибкой',
};

/** An event by its API name (as the shop filters and receives it), with its meaning on a Russian page. */
export function EventName({ event, lang }: { event: string; lang: PageLang }) {
  const ru = lang === 'ru' ? RU_EVENTS[event] : undefined;
  return ru ? (
    <>
      {ru} <Code class="copy muted">{event}</Code>
    </>
  ) : (
    <Code class="copy">{event}</Code>
  );
}

/** Kopek's own words in a subscription payment's description: "Gold (subscription sbs_…)". */
const SUBSCRIPTION_CHARGE = /^(.*) \(subscription (\S+)\)$/s;

/** A payment's description; on a Russian page Kopek's own words in it in Russian (the shop's stay). */
export function descriptionText(description: string | null | undefined, lang: PageLang): string {
  if (!description) return '—';
  const charge = lang === 'ru' ? SUBSCRIPTION_CHARGE.exec(description) : null;
  return charge ? `${charge[1]} (подписка ${charge[2]})` : description;
}

/** A language code as the reader's language names it: "ru" → "русский" on a Russian page. */
export function languageName(code: string | null | undefined, lang: PageLang): string {
  if (!code) return '—';
  try {
    return new Intl.DisplayNames([lang], { type: 'language' }).of(code) ?? code;
  } catch {
    return code;
  }
}

/**
 * A text with `{name}` placeholders filled by page pieces (a `<Code>`, a link): the text's words
 * translated, the pieces kept as they are.
 */
export function fillParts(text: string, values: Record<string, ComponentChildren>): ComponentChildren[] {
  return text
    .split(/(\{\w+\})/)
    .map((part) => {
      const name = /^\{(\w+)\}$/.exec(part)?.[1];
      return name !== undefined && name in values ? values[name] : part;
    })
    .filter((part) => part !== '');
}
