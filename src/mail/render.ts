import { DateTime } from 'luxon';
import type { MailLanguage } from './texts.js';

/**
 * One e-mail's content as parts, rendered twice: as plain text (here) and as HTML (html.tsx, where
 * the JSX renderer escapes every part: plan titles, shop names, receipt lines and reasons come from
 * shops and buyers). Both come from the same parts, so they say the same thing.
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
