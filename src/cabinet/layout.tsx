import type { ComponentChildren } from 'preact';
import { CsrfField } from '../pages/components.js';
import { Document } from '../pages/document.js';
import type { CabinetContext } from './context.js';
import { cabinetTexts } from './texts.js';

/** The sections of the cabinet, in the order the navigation shows them. */
export const SECTIONS = [
  ['overview', '/cabinet'],
  ['subscriptions', '/cabinet/subscriptions'],
  ['payments', '/cabinet/payments'],
  ['products', '/cabinet/products'],
  ['customers', '/cabinet/customers'],
  ['proofs', '/cabinet/proofs'],
  ['notifications', '/cabinet/notifications'],
  ['emails', '/cabinet/emails'],
  ['settings', '/cabinet/settings'],
] as const;

export type Section = (typeof SECTIONS)[number][0];

export interface CabinetPageProps {
  cabinet: CabinetContext;
  /** The page's heading and, with the shop's name, its title. */
  title: string;
  /** The heading when it is more than the title's text (words in another language marked so). */
  heading?: ComponentChildren;
  section: Section;
  /** Scripts from /assets (the pages work without them). */
  scripts?: string[];
  children: ComponentChildren;
}

/**
 * Every signed-in page: a header with the shop and sign-out, the sections' navigation (the current
 * one marked for screen readers too), and the page under one h1.
 */
export function CabinetPage({ cabinet, title, heading, section, scripts, children }: CabinetPageProps) {
  const t = cabinetTexts(cabinet.lang);
  const other = cabinet.lang === 'ru' ? 'en' : 'ru';
  return (
    <Document
      lang={cabinet.lang}
      title={`${title} · ${cabinet.shop.name}`}
      bodyClass="cabinet"
      scripts={scripts}
    >
      <a class="skip" href="#content">
        {t.skip}
      </a>
      <header class="topbar">
        <a class="logo" href="/cabinet">
          {t.product}
        </a>
        <span class="shop-name">
          {cabinet.shop.name} <span class="muted">#{cabinet.shop.id}</span>
          {cabinet.shop.test && <span class="badge test">{t.testBadge}</span>}
        </span>
        <a
          class="lang-switch"
          href={`/cabinet/language?to=${other}&back=${encodeURIComponent(cabinet.path)}`}
          lang={other}
          hreflang={other}
        >
          {t.language}
        </a>
        <form method="post" action="/cabinet/sign-out" class="sign-out">
          <CsrfField token={cabinet.csrf} />
          <button type="submit">{t.signOut}</button>
        </form>
      </header>
      {cabinet.shop.test && (
        <div class="test-strip" role="note">
          {t.testShop}
        </div>
      )}
      <div class="frame">
        <nav aria-label={t.nav} class="sections">
          <ul>
            {SECTIONS.map(([name, href]) => (
              <li>
                <a href={href} aria-current={name === section ? 'page' : undefined}>
                  {t[name]}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <main id="content" tabIndex={-1}>
          <h1>{heading ?? title}</h1>
          {children}
        </main>
      </div>
    </Document>
  );
}
