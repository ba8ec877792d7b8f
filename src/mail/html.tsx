import { renderPage } from '../pages/render.js';
import type { Message } from './render.js';

/**
 * An e-mail's HTML, rendered by the pages' JSX renderer: everything in text and attributes is
 * escaped by the renderer (plan titles, shop names, receipt lines and reasons come from shops and
 * buyers), and nothing is built by concatenation. Styles are inline: mail clients drop stylesheets.
 */

const CELL = 'padding:4px 16px 4px 0;vertical-align:top';

function Mail({ m }: { m: Message }) {
  return (
    <html lang={m.language}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{m.subject}</title>
      </head>
      <body style="margin:0;padding:24px;font-family:Arial,Helvetica,sans-serif;font-size:15px;color:#222">
        <h1 style="font-size:20px;margin:0 0 16px">{m.heading}</h1>
        {m.paragraphs.map((p) => (
          <p>{p}</p>
        ))}
        {m.rows.length > 0 && (
          <table style="border-collapse:collapse;margin:16px 0">
            {m.rows.map(([label, value]) => (
              <tr>
                <th style={`${CELL};text-align:left;color:#555`}>{label}</th>
                <td style={CELL}>{value}</td>
              </tr>
            ))}
          </table>
        )}
        {m.notes.length > 0 && (
          <p style="margin:16px 0;padding:12px;background:#f5f5f5">
            {m.notes.map((line, i) => (
              <>
                {i > 0 && <br />}
                {line}
              </>
            ))}
          </p>
        )}
        <p style="margin-top:24px;font-size:12px;color:#777">{m.footer}</p>
      </body>
    </html>
  );
}

export const renderHtml = (m: Message): string => renderPage(<Mail m={m} />);
