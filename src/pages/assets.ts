import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { FastifyPluginAsync } from 'fastify';
import { CODE_ROOT } from '../code-root.js';

/**
 * The pages' stylesheets and scripts, served from this origin (no third-party assets) under
 * `/assets/<name>?v=<hash>`: the hash changes with the content, so browsers may keep a file for a
 * year and still never run a stale script after an upgrade. The icon, too: every page links it, and
 * `/favicon.ico` answers for the clients that ask there without reading the page.
 */

const DIR = new URL('pages/assets/', CODE_ROOT);
const TYPES: Record<string, string> = {
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  svg: 'image/svg+xml',
  ico: 'image/x-icon',
};

export interface Asset {
  body: Buffer;
  type: string;
  hash: string;
}

const assets = new Map<string, Asset>();
for (const name of readdirSync(DIR)) {
  const type = TYPES[name.split('.').pop() ?? ''];
  if (!type) continue;
  const body = readFileSync(new URL(name, DIR));
  assets.set(name, { body, type, hash: createHash('sha256').update(body).digest('hex').slice(0, 12) });
}

/** An asset's bytes, type and short hash (e.g. for a route of its own, as the widget script's). */
export function assetFile(name: string): Asset {
  const asset = assets.get(name);
  if (!asset) throw new Error(`No page asset named ${name}`);
  return asset;
}

/** The address of an asset, with the version that makes long caching safe. */
export function assetUrl(name: string): string {
  const asset = assets.get(name);
  if (!asset) throw new Error(`No page asset named ${name}`);
  return `/assets/${name}?v=${asset.hash}`;
}

export const assetRoutes: FastifyPluginAsync = async (app) => {
  const icon = assets.get('favicon.ico') as Asset;
  app.get('/favicon.ico', { config: { public: true }, schema: { hide: true } }, async (_request, reply) =>
    reply
      .header('content-type', icon.type)
      // Unversioned: kept a day, so a new icon shows within one.
      .header('cache-control', 'public, max-age=86400')
      .header('x-content-type-options', 'nosniff')
      .send(icon.body),
  );
  app.get<{ Params: { name: string } }>(
    '/assets/:name',
    { config: { public: true }, schema: { hide: true } },
    async (request, reply) => {
      const asset = assets.get(request.params.name);
      if (!asset) return reply.code(404).type('text/plain; charset=utf-8').send('Not found');
      return reply
        .header('content-type', asset.type)
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('x-content-type-options', 'nosniff')
        .send(asset.body);
    },
  );
};
