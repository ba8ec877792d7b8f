import type { ComponentChildren } from 'preact';
import { assetUrl } from './assets.js';
import type { PageLang } from './lang.js';

export interface DocumentProps {
  lang: PageLang;
  title: string;
  /** Scripts from /assets by file name; pages work without them (progressive enhancement). */
  scripts?: string[];
  /** A class on <body>, so the cabinet and the hosted pages can lay out differently. */
  bodyClass?: string;
  /** Shown above everything: test products and sandbox shops say so on every page. */
  banner?: ComponentChildren;
  /** Extra elements of <head>, e.g. a result page's `<meta http-equiv="refresh">` (CSP-safe, works without JS). */
  head?: ComponentChildren;
  children: ComponentChildren;
}

/**
 * The whole HTML document of every page: one stylesheet and the page's scripts from this origin,
 * nothing inline (the Content-Security-Policy forbids inline scripts and styles), nothing from
 * third parties.
 */
export function Document({ lang, title, scripts = [], bodyClass, banner, head, children }: DocumentProps) {
  return (
    <html lang={lang}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>{title}</title>
        <link rel="stylesheet" href={assetUrl('pages.css')} />
        {scripts.map((name) => (
          <script src={assetUrl(name)} defer />
        ))}
        {head}
      </head>
      <body class={bodyClass}>
        {banner}
        {children}
      </body>
    </html>
  );
}

/** A hosted page (payment, checkout, 3-D Secure): one centred card. */
export function HostedPage(props: Omit<DocumentProps, 'bodyClass'>) {
  const { children, ...rest } = props;
  return (
    <Document {...rest} bodyClass="hosted">
      <main class="card">{children}</main>
    </Document>
  );
}
