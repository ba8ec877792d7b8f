import { defineTexts } from '../../pages/lang.js';

/** How the shop's notifications authenticate, and its notification keys. */
export const signingTexts = defineTexts({
  en: {
    notifications: 'Notifications to your URL',
    auth: 'How notifications authenticate',
    authBasic: 'HTTP Basic with the shop id and secret key (https only) and signatures',
    authSignature: 'Signatures only: no credentials in the request',
    authHint:
      'Basic suits the platform’s client libraries; it is never sent to plain http:// addresses. With signatures only, check {contentSignature} and {kopekSignature}.',
    authInvalid: 'Choose how notifications authenticate.',
    webhookSecret: 'Webhook signing secret',
    webhookSecretHint:
      'Signs the {kopekSignature} header (HMAC-SHA256 over the time and the body). Refuse notifications whose time is more than 5 minutes old.',
    previousUntil: 'The previous secret signs too until {until}: accept either until then.',
    rotateSecret: 'Rotate the signing secret',
    rotateSecretHint: 'The current secret keeps signing beside the new one for 24 hours.',
    secretRotated: 'A new webhook signing secret is in use; the previous one signs too for 24 hours.',
    pending: 'New public key, not yet used',
    pendingHint:
      'Notifications are still signed with the current key. Let your receiver accept the new key, then confirm it.',
    confirmKey: 'Confirm the new key: sign with it from now on',
    rotateKey: 'Create a new key pair',
    rotateKeyHint: 'Its public key is shown here first; nothing changes until you confirm it.',
    keyRotated: 'A new key pair is pending. Confirm it once your receiver accepts it.',
    keyConfirmed: 'Notifications are signed with the new key from now on.',
    nothingPending: 'There is no new key to confirm: create a new key pair first.',
  },
  ru: {
    notifications: 'Уведомления на ваш адрес',
    auth: 'Как уведомления подтверждают подлинность',
    authBasic:
      'Базовая HTTP-аутентификация: идентификатор и секретный ключ магазина (только на адреса https://), и подписи',
    authSignature: 'Только подписи: без учётных данных в запросе',
    authHint:
      'Базовую аутентификацию понимают клиентские библиотеки платформы; на адреса http:// она не отправляется никогда. Только с подписями проверяйте заголовки {contentSignature} и {kopekSignature}.',
    authInvalid: 'Выберите, как уведомления подтверждают подлинность.',
    webhookSecret: 'Секрет подписи уведомлений',
    webhookSecretHint:
      'Подписывает заголовок {kopekSignature} (HMAC-SHA256 по времени и телу). Отклоняйте уведомления старше 5 минут.',
    previousUntil: 'Прежний секрет тоже подписывает до {until}: до этого времени принимайте любой.',
    rotateSecret: 'Сменить секрет подписи',
    rotateSecretHint: 'Текущий секрет ещё 24 часа подписывает вместе с новым.',
    secretRotated: 'Используется новый секрет подписи; прежний ещё 24 часа подписывает вместе с ним.',
    pending: 'Новый открытый ключ, пока не используется',
    pendingHint:
      'Уведомления пока подписываются текущим ключом. Научите свой приёмник принимать новый ключ, затем подтвердите его.',
    confirmKey: 'Подтвердить новый ключ: подписывать им с этого момента',
    rotateKey: 'Создать новую пару ключей',
    rotateKeyHint:
      'Сначала здесь появится её открытый ключ; ничего не изменится, пока вы его не подтвердите.',
    keyRotated: 'Новая пара ключей ожидает подтверждения. Подтвердите её, когда приёмник будет её принимать.',
    keyConfirmed: 'С этого момента уведомления подписываются новым ключом.',
    nothingPending: 'Нет нового ключа для подтверждения: сначала создайте новую пару ключей.',
  },
});
