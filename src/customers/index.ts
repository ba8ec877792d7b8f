/**
 * The customers feature's face: what other features may use of it. Subscriptions find, insert and
 * validate the customer they are created for (one by one or inside a batch) and show it, with its
 * request schema; billing and the cabinet read customer rows and show them. Nothing else of
 * `customers/` is for use outside it (the composition root aside).
 */
export {
  type CustomerRow,
  customerInsert,
  findCustomer,
  findCustomers,
  insertCustomer,
  type NewCustomer,
  newCustomerRow,
} from './repository.js';
export { CustomerInput } from './schemas.js';
export { type Customer, toCustomer, validateCustomer } from './service.js';
