import { Document } from '../pages/document.js';
import type { PageLang } from '../pages/lang.js';
import { hostedProblemPage } from '../pages/problem.js';
import type { ProblemKind } from '../pages/scope.js';
import { cabinetTexts } from './texts.js';

/** The cabinet's problem pages: "not found" also covers another shop's objects (never "forbidden"). */
export function cabinetProblemPage(lang: PageLang, kind: ProblemKind) {
  if (kind !== 'notFound') return hostedProblemPage(lang, kind);
  const t = cabinetTexts(lang);
  return (
    <Document lang={lang} title={t.notFoundTitle} bodyClass="hosted">
      <main class="card">
        <h1>{t.notFoundTitle}</h1>
        <p>{t.notFoundText}</p>
        <p>
          <a href="/cabinet">{t.overview}</a>
        </p>
      </main>
    </Document>
  );
}
