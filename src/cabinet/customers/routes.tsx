import type { FastifyPluginAsync } from 'fastify';
import { findCustomer, toCustomer } from '../../customers/index.js';
import { isId } from '../../ids.js';
import { sendPage } from '../../pages/render.js';
import { PageProblem } from '../../pages/scope.js';
import { cabinetOf } from '../context.js';
import { cursorOf, pageOf } from '../paging.js';
import { queryText } from '../payments/view.js';
import { CustomerPage, CustomersPage } from './pages.js';
import { type CustomerSearch, listCustomerPage, paymentsOf, subscriptionsOf } from './repository.js';

/** The customers section: /cabinet/customers with a search, and a customer's page. */

const PAGE = 50;
const RELATED = 50;

/** The search box takes a customer id or the start of an e-mail address. */
function searchOf(q: string | undefined): CustomerSearch {
  if (q === undefined) return {};
  return /^cst_/i.test(q) ? { id: q } : { email: q };
}

export const customersSection: FastifyPluginAsync = async (app) => {
  app.get('/customers', async (request, reply) => {
    const cabinet = cabinetOf(request);
    const query = request.query as Record<string, unknown>;
    const q = queryText(query.q, 254);
    const fetched = await listCustomerPage(
      request.server.services.db,
      cabinet.shop.id,
      searchOf(q),
      cursorOf(query.after),
      PAGE,
    );
    const { rows, next } = pageOf(fetched, PAGE);
    return sendPage(reply, 200, <CustomersPage cabinet={cabinet} rows={rows} next={next} q={q} />);
  });

  app.get<{ Params: { id: string } }>('/customers/:id', async (request, reply) => {
    const cabinet = cabinetOf(request);
    const { db } = request.server.services;
    const { id } = request.params;
    const row = isId('cst', id) ? await findCustomer(db, cabinet.shop.id, id) : undefined;
    if (!row) throw new PageProblem(404, 'notFound', cabinet.lang);
    return sendPage(
      reply,
      200,
      <CustomerPage
        cabinet={cabinet}
        customer={toCustomer(row)}
        createdAt={row.created_at}
        subscriptions={await subscriptionsOf(db, cabinet.shop.id, id, RELATED)}
        payments={await paymentsOf(db, cabinet.shop.id, id, RELATED)}
        limit={RELATED}
      />,
    );
  });
};
