/** A query parameter of a cabinet page as one trimmed string ('' when absent, repeated or too long). */
export function queryText(query: unknown, name: string, max = 200): string {
  const value = (query as Record<string, unknown> | undefined)?.[name];
  if (typeof value !== 'string') return '';
  const text = value.trim();
  return text.length <= max ? text : '';
}

/**
 * SQL that keeps customers whose e-mail address starts with the text in parameter `param`, in any
 * letter case: the stretch of the customers_shop_email index (lower-cased, compared character by
 * character) from the prefix up to the prefix followed by the last code point.
 */
export function emailStartsWith(param: string): string {
  return `lower(email) ~>=~ lower(${param}) AND lower(email) ~<~ (lower(${param}) || chr(1114111))`;
}
