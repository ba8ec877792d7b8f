import { ApiError, ErrorCollector } from './errors.js';

/** A page of a list: its size and the cursor after which it starts (decisions.md, Lists). */
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

export function unknownCursor(): ApiError {
  return ApiError.validation({ starting_after: ['does not name an object of this list'] });
}
