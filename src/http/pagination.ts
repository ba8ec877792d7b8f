import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { ListParams } from '../core/paging.js';

export const ListQuery = Type.Object({
  limit: Type.Optional(Type.String({ description: 'Page size, 1 to 100 (default 100)' })),
  starting_after: Type.Optional(Type.String({ description: 'Id of the last object of the previous page' })),
});

/** Rows come fetched with limit + 1: the extra one only says there is a next page. */
export function page<T extends { id: string }>(
  reply: FastifyReply,
  url: string,
  params: ListParams,
  rows: T[],
  extraQuery: Record<string, string | undefined> = {},
): T[] {
  if (rows.length <= params.limit) return rows;
  const items = rows.slice(0, params.limit);
  const next = new URL(url);
  for (const [k, v] of Object.entries(extraQuery)) if (v !== undefined) next.searchParams.set(k, v);
  next.searchParams.set('limit', String(params.limit));
  next.searchParams.set('starting_after', (items.at(-1) as T).id);
  reply.header('link', `<${next.toString()}>; rel="next"`);
  return items;
}
