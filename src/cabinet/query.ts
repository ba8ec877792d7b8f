/** A query parameter of a cabinet page as one trimmed string ('' when absent, repeated or too long). */
export function queryText(query: unknown, name: string, max = 200): string {
  const value = (query as Record<string, unknown> | undefined)?.[name];
  if (typeof value !== 'string') return '';
  const text = value.trim();
  return text.length <= max ? text : '';
}
