import type { FastifyPluginAsync } from 'fastify';
import { isId } from '../../ids.js';
import { sendPage } from '../../pages/render.js';
import { PageProblem } from '../../pages/scope.js';
import { findProduct, toProduct } from '../../products/index.js';
import { cabinetOf } from '../context.js';
import { cursorOf, pageOf } from '../paging.js';
import { cabinetCtx, queryText } from '../payments/view.js';
import { ProductPage, ProductsPage } from './pages.js';
import { listProductPage } from './repository.js';

/** The products section: /cabinet/products and a product's page with its payment links. */

const PAGE = 50;

export const productsSection: FastifyPluginAsync = async (app) => {
  app.get('/products', async (request, reply) => {
    const cabinet = cabinetOf(request);
    const query = request.query as Record<string, unknown>;
    const fetched = await listProductPage(
      request.server.services.db,
      cabinet.shop.id,
      cursorOf(query.after),
      PAGE,
    );
    const { rows, next } = pageOf(fetched, PAGE);
    const now = cabinetCtx(request).clock.now();
    return sendPage(
      reply,
      200,
      <ProductsPage
        cabinet={cabinet}
        rows={rows}
        next={next}
        query={{ after: queryText(query.after) }}
        now={now}
      />,
    );
  });

  app.get<{ Params: { id: string } }>('/products/:id', async (request, reply) => {
    const cabinet = cabinetOf(request);
    const ctx = cabinetCtx(request);
    const { id } = request.params;
    // The API's answer of a product (toProduct: the same links the API gives); another shop's is not found.
    const row = isId('prd', id) ? await findProduct(ctx.db, cabinet.shop.id, id) : undefined;
    if (!row) throw new PageProblem(404, 'notFound', cabinet.lang);
    return sendPage(
      reply,
      200,
      <ProductPage cabinet={cabinet} product={toProduct(row, ctx.config)} row={row} now={ctx.clock.now()} />,
    );
  });
};
