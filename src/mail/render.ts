import { DateTime } from 'luxon';
import type { MailLanguage } from './texts.js';

/**
 * One e-mail's content as parts, rendered twice: as plain text and as HTML. Both come from the same
 * parts, so they say the same thing, and the HTML escapes every part in this one place: plan titles,
 * shop names, receipt lines and reasons come from shops and buyers.
 */
export interface Message {
  language: MailLanguage;
  subject: string;
  heading: string;
  paragraphs: string[];
  /** Label and value, shown as a table. */
  rows: Array<[string, string]>;
  /** The subscription's receipt_text, a line each, as the shop wrote them. */
  notes: string[];
  footer: string;
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);

const SUBJECT_MAX = 200;

/** A header is one line: line breaks a shop put into a plan title must not reach it. */
export function oneLine(value: string, max = SUBJECT_MAX): string {
  const flat = value.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** An instant as the shop's people read it: local date and time in the shop's zone, zone named. */
export function formatDate(iso: string, zone: string): string {
  let at = DateTime.fromISO(iso, { zone });
  if (!at.isValid) at = DateTime.fromISO(iso, { zone: 'UTC' });
  if (!at.isValid) return iso;
  return `${at.toFormat('yyyy-MM-dd HH:mm')} (${at.zoneName})`;
}

export function renderText(m: Message): string {
  const parts = [m.heading, ...m.paragraphs];
  if (m.rows.length > 0) parts.push(m.rows.map(([label, value]) => `${label}: ${value}`).join('\n'));
  if (m.notes.length > 0) parts.push(m.notes.join('\n'));
  parts.push(`-- \n${m.footer}`);
  return `${parts.join('\n\n')}\n`;
}

const CELL = 'padding:4px 16px 4px 0;vertical-align:top';

export function renderHtml(m: Message): string {
  const e = escapeHtml;
  const rows = m.rows
    .map(
      ([label, value]) => `<tr><th style="${CELL};text-align:left;color:#555">${e(label)}</th>
<td style="${CELL}">${e(value)}</td></tr>`,
    )
    .join('\n');
  const notes = m.notes.map((line) => e(line)).join('<br>\n');
  return `<!doctype html>
<html lang="${m.language}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${e(m.subject)}</title>
</head>
<body style="margin:0;padding:24px;font-family:Arial,Helvetica,sans-serif;font-size:15px;color:#222">
<h1 style="font-size:20px;margin:0 0 16px">${e(m.heading)}</h1>
${m.paragraphs.map((p) => `<p>${e(p)}</p>`).join('\n')}
${rows ? `<table style="border-collapse:collapse;margin:16px 0">\n${rows}\n</table>` : ''}
${notes ? `<p style="margin:16px 0;padding:12px;background:#f5f5f5">${notes}</p>` : ''}
<p style="margin-top:24px;font-size:12px;color:#777">${e(m.footer)}</p>
</body>
</html>
`;
}
