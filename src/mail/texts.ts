/**
 * Every word of Kopek's e-mails, one dictionary per language. `{name}` marks a value filled in by
 * `fill`; values are plain text here and escaped only when the HTML is rendered.
 */

const en = {
  hello: 'Hello, {name}.',
  helloNoName: 'Hello.',
  receiptSubject: 'Receipt: {plan}, {amount}',
  receiptHeading: 'Thank you for your payment',
  receiptIntro: '{shop} has received your payment of {amount} for {plan}.',
  failedSubject: 'Payment failed: {plan}',
  failedHeading: 'Your payment did not go through',
  failedIntro: 'We could not charge {amount} for {plan} at {shop}.',
  failedAdvice: 'Please make sure your card has enough funds and has not expired.',
  canceledSubject: 'Subscription canceled: {plan}',
  canceledHeading: 'Your subscription has been canceled',
  canceledIntro: 'Your subscription to {plan} at {shop} was canceled on {date}.',
  amount: 'Amount',
  date: 'Date',
  plan: 'Subscription',
  subscription: 'Subscription id',
  transaction: 'Transaction',
  paidUntil: 'Paid until',
  nextPayment: 'Next payment',
  reason: 'Reason',
  footer: 'This message was sent by {shop} through Kopek.',
  // Shop notices are read by the shop's staff: English only.
  transactionSubject: 'Transaction {status}: {amount}',
  transactionHeading: 'Transaction {status}',
  transactionIntro: 'A {type} of {amount} is {status}.',
  status: 'Status',
  type: 'Type',
  description: 'Description',
  message: 'Message',
  trackingId: 'Tracking id',
  test: 'Test',
  yes: 'yes',
  no: 'no',
  shopFooter: 'Kopek transaction notice for {shop}. Turn it off with PATCH /shop.',
};

export type Texts = typeof en;

const ru: Texts = {
  ...en,
  hello: 'Здравствуйте, {name}.',
  helloNoName: 'Здравствуйте.',
  receiptSubject: 'Чек: «{plan}», {amount}',
  receiptHeading: 'Спасибо за оплату',
  receiptIntro: 'Магазин «{shop}» получил вашу оплату {amount} за «{plan}».',
  failedSubject: 'Платёж не прошёл: «{plan}»',
  failedHeading: 'Платёж не прошёл',
  failedIntro: 'Не удалось списать {amount} за «{plan}» в магазине «{shop}».',
  failedAdvice: 'Проверьте, что на карте достаточно средств и срок её действия не истёк.',
  canceledSubject: 'Подписка отменена: «{plan}»',
  canceledHeading: 'Ваша подписка отменена',
  canceledIntro: 'Подписка на «{plan}» в магазине «{shop}» отменена {date}.',
  amount: 'Сумма',
  date: 'Дата',
  plan: 'Подписка',
  subscription: 'Номер подписки',
  transaction: 'Транзакция',
  paidUntil: 'Оплачено до',
  nextPayment: 'Следующий платёж',
  reason: 'Причина',
  footer: 'Это письмо отправлено магазином «{shop}» через Kopek.',
};

const DICTIONARIES: Record<string, Texts> = { en, ru };

export type MailLanguage = 'en' | 'ru';

/** The language an e-mail is written in: the subscription's when translated, English otherwise. */
export function mailLanguage(language: unknown): MailLanguage {
  return language === 'ru' ? 'ru' : 'en';
}

export function textsFor(language: MailLanguage): Texts {
  return DICTIONARIES[language] ?? en;
}

/** `{name}` → `values.name`; a placeholder without a value is left as it is. */
export function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => values[key] ?? whole);
}
