import type { ComponentChildren } from 'preact';
import { assetUrl } from './assets.js';
import { TestBanner } from './components.js';
import type { PageLang } from './lang.js';
import { LanguageSwitch } from './language-switch.js';

export interface DocumentProps {
  lang: PageLang;
  title: string;
  /** Scripts from /assets by file name; pages work without them (progressive enhancement). */
  scripts?: string[];
  /** A class on <body>, so the cabinet and the hosted pages can lay out differently. */
  bodyClass?: string;
  /** Shown above everything: test products and sandbox shops say so on every page. */
  banner?: ComponentChildren;
  /** Shown below everything: a hosted page's language switch. */
  footer?: ComponentChildren;
  /** Extra elements of <head>, e.g. a result page's `<meta http-equiv="refresh">` (CSP-safe, works without JS). */
  head?: ComponentChildren;
  /** data-* attributes of <body> for the page's scripts (names without the `data-` prefix). */
  data?: Record<string, string | undefined>;
  children: ComponentChildren;
}

/**
 * The whole HTML document of every page: one stylesheet and the page's scripts from this origin,
 * nothing inline (the Content-Security-Policy forbids inline scripts and styles), nothing from
 * third parties.
 */
export function Document({
  lang,
  title,
  scripts = [],
  bodyClass,
  banner,
  footer,
  head,
  data = {},
  children,
}: DocumentProps) {
  const dataAttrs = Object.fromEntries(
    Object.entries(data)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [`data-${k}`, v]),
  );
  return (
    <html lang={lang}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>{title}</title>
        <link rel="icon" href={assetUrl('favicon.svg')} type="image/svg+xml" />
        <link rel="stylesheet" href={assetUrl('pages.css')} />
        {scripts.map((name) => (
          <script src={assetUrl(name)} defer />
        ))}
        {head}
      </head>
      <body class={bodyClass} {...dataAttrs}>
        {banner}
        {children}
        {footer}
      </body>
    </html>
  );
}

export interface HostedPageProps extends Omit<DocumentProps, 'bodyClass' | 'banner' | 'footer'> {
  /** A test product's, checkout's or shop's page: the one test banner, in the page's language. */
  test?: boolean;
  /**
   * Shown in a frame on the shop's page (or a phone's window of its own): laid out to fit 320×480,
   * and frame.js speaks the widget's protocol with the shop's window (docs/embedding.md).
   */
  framed?: boolean;
}

/**
 * A hosted page (payment, checkout, 3-D Secure, their problem pages): one centred card, the test
 * banner above it when nothing real is charged, and below it the switch to the page in the other
 * language (after the form, so the keyboard reaches the buyer's fields first).
 */
export function HostedPage(props: HostedPageProps) {
  const { children, test, framed, scripts = [], ...rest } = props;
  return (
    <Document
      {...rest}
      scripts={framed ? [...scripts, 'frame.js'] : scripts}
      bodyClass={framed ? 'hosted framed' : 'hosted'}
      banner={test ? <TestBanner lang={props.lang} /> : undefined}
      footer={<LanguageSwitch lang={props.lang} />}
    >
      <main class="card">{children}</main>
    </Document>
  );
}
