/**
 * The products feature's face: what other features may use of it. The product page's checkout reads
 * and holds product rows; the cabinet finds a product and shows it in its public view. Nothing else
 * of `products/` is for use outside it (the composition root aside).
 */
export { findProduct, type ProductRow } from './repository.js';
export { type Product, toProduct } from './service.js';
