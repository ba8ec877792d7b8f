import { HostedPage } from './document.js';
import { defineTexts, type PageLang } from './lang.js';
import type { ProblemKind } from './scope.js';

export const problemTexts = defineTexts({
  en: {
    notFoundTitle: 'Page not found',
    notFoundText: 'This link is not valid. Return to the shop and try again.',
    badRequestTitle: 'Request not understood',
    badRequestText: 'This page could not handle the request. Return to the shop and try again.',
    forbiddenTitle: 'Not allowed',
    forbiddenText: 'You cannot open this page.',
    expiredFormTitle: 'This form has expired',
    expiredFormText: 'For your security the form could not be sent. Go back, reload the page and try again.',
    tooManyTitle: 'Too many attempts',
    tooManyText: 'Please wait a minute and try again.',
    unavailableTitle: 'Temporarily unavailable',
    unavailableText: 'Please try again in a moment.',
  },
  ru: {
    notFoundTitle: 'Страница не найдена',
    notFoundText: 'Ссылка недействительна. Вернитесь в магазин и попробуйте ещё раз.',
    badRequestTitle: 'Запрос не распознан',
    badRequestText: 'Страница не смогла обработать запрос. Вернитесь в магазин и попробуйте ещё раз.',
    forbiddenTitle: 'Доступ запрещён',
    forbiddenText: 'Эту страницу открыть нельзя.',
    expiredFormTitle: 'Срок действия формы истёк',
    expiredFormText:
      'В целях безопасности форма не была отправлена. Вернитесь назад, обновите страницу и попробуйте ещё раз.',
    tooManyTitle: 'Слишком много попыток',
    tooManyText: 'Подождите минуту и попробуйте ещё раз.',
    unavailableTitle: 'Сервис временно недоступен',
    unavailableText: 'Попробуйте ещё раз через минуту.',
  },
});

/** The hosted pages' answer to a request they cannot serve: a page, in the buyer's language. */
export function HostedProblemPage({ lang, kind }: { lang: PageLang; kind: ProblemKind }) {
  const t = problemTexts(lang);
  const [title, text]: [string, string] = {
    notFound: [t.notFoundTitle, t.notFoundText],
    badRequest: [t.badRequestTitle, t.badRequestText],
    forbidden: [t.forbiddenTitle, t.forbiddenText],
    expiredForm: [t.expiredFormTitle, t.expiredFormText],
    tooMany: [t.tooManyTitle, t.tooManyText],
    unavailable: [t.unavailableTitle, t.unavailableText],
  }[kind] as [string, string];
  return (
    <HostedPage lang={lang} title={title}>
      <h1>{title}</h1>
      <p>{text}</p>
    </HostedPage>
  );
}

export const hostedProblemPage = (lang: PageLang, kind: ProblemKind) => (
  <HostedProblemPage lang={lang} kind={kind} />
);
