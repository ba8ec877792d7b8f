import { defineTexts } from '../pages/lang.js';

/** The 3-D Secure page's words, in every language the hosted pages speak. */
export const threeDsTexts = defineTexts({
  en: {
    challengeTitle: '3-D Secure authentication',
    challengeIntro: 'Confirm this payment with your bank.',
    sandbox: 'This is a Kopek sandbox page: choose how the authentication ends.',
    shop: 'Shop',
    amount: 'Amount',
    card: 'Card',
    description: 'Description',
    pass: 'Pass authentication',
    fail: 'Fail authentication',
    checkingTitle: 'Checking your card',
    checkingIntro: 'Your bank is confirming the payment. This takes a moment.',
    continue: 'Continue',
    successTitle: 'Payment successful',
    successText: 'The payment has been completed.',
    failedTitle: 'Payment failed',
    failedText: 'Your bank did not confirm the payment.',
    back: 'Return to the shop',
    notFoundTitle: 'Payment not found',
    notFoundText: 'This link is not valid. Return to the shop and try again.',
  },
  ru: {
    challengeTitle: 'Проверка 3-D Secure',
    challengeIntro: 'Подтвердите этот платёж в своём банке.',
    sandbox: 'Это тестовая страница песочницы Kopek: выберите, чем закончится проверка.',
    shop: 'Магазин',
    amount: 'Сумма',
    card: 'Карта',
    description: 'Назначение',
    pass: 'Пройти проверку',
    fail: 'Не пройти проверку',
    checkingTitle: 'Проверяем карту',
    checkingIntro: 'Банк подтверждает платёж. Это займёт мгновение.',
    continue: 'Продолжить',
    successTitle: 'Платёж прошёл успешно',
    successText: 'Платёж выполнен.',
    failedTitle: 'Платёж не прошёл',
    failedText: 'Банк не подтвердил платёж.',
    back: 'Вернуться в магазин',
    notFoundTitle: 'Платёж не найден',
    notFoundText: 'Ссылка недействительна. Вернитесь в магазин и попробуйте ещё раз.',
  },
});

export type ThreeDsTexts = ReturnType<typeof threeDsTexts>;
