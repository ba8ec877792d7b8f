import { expect } from 'vitest';
import { type Client, TEST_PUBLIC_URL } from './harness.js';

const idsOf = (body: { id: string }[]) => body.map((r) => r.id);

/**
 * The list contract every resource shares, checked on `path` of a shop that created exactly the five
 * records `ids` (in that order): newest first and without a Link header when it all fits, each item
 * as GET `{path}/{id}` answers it; then pages of two linked by `starting_after`, the last without a
 * Link header.
 */
export async function expectNewestFirstPages(api: Client, path: string, ids: string[]): Promise<void> {
  expect(ids).toHaveLength(5);
  const all = await api.get(path);
  expect(all.status).toBe(200);
  expect(idsOf(all.body)).toEqual([...ids].reverse());
  expect(all.body[0]).toEqual((await api.get(`${path}/${ids[4]}`)).body);
  expect(all.headers.link).toBeUndefined();

  const first = await api.get(`${path}?limit=2`);
  expect(idsOf(first.body)).toEqual([ids[4], ids[3]]);
  expect(first.headers.link).toBe(`<${TEST_PUBLIC_URL}${path}?limit=2&starting_after=${ids[3]}>; rel="next"`);
  const second = await api.get(`${path}?limit=2&starting_after=${ids[3]}`);
  expect(idsOf(second.body)).toEqual([ids[2], ids[1]]);
  const last = await api.get(`${path}?limit=2&starting_after=${ids[1]}`);
  expect(idsOf(last.body)).toEqual([ids[0]]);
  expect(last.headers.link).toBeUndefined();
}
