/**
 * The e-mail feature's face: what other features may use of it. The cabinet's e-mail pages find an
 * e-mail a shop was sent and show it (its row and status, and the public `Email` view). Nothing else
 * of `mail/` is for use outside it (the composition root aside).
 */
export { type EmailRow, type EmailStatus, findEmail } from './repository.js';
export { type Email, getEmail } from './service.js';
