import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { ApiError, ErrorCollector } from './errors.js';

export const ListQuery = Type.Object({
  limit: Type.Optional(Type.String({ description: 'Page size, 1 to 100 (default 100)' })),
  starting_after: Type.Optional(Type.String({ description: 'Id of the last object of the previous page' })),
});

export interface ListParams {
  limit: number;
  startingAfter: string | undefined;
}

export function parseListQuery(query: { limit?: string; starting_after?: string }): ListParams {
  const errors = new ErrorCollector();
  let limit = 100;
  if (query.limit !== undefined) {
    if (!/^\d+$/.test(query.limit) || Number(query.limit) < 1 || Number(query.limit) > 100) {
      errors.add('limit', 'must be a whole number from 1 to 100');
    } else limit = Number(query.limit);
  }
  errors.throwIfAny();
  return { limit, startingAfter: query.starting_after || undefined };
}

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

export function unknownCursor(): ApiError {
  return ApiError.validation({ starting_after: ['does not name an object of this list'] });
}
