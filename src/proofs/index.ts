/**
 * The proofs feature's face: what other features may use of it. The cabinet shows a proof's stored
 * document, with the headers it is sent with (its file name, a policy that runs nothing in it).
 * Nothing else of `proofs/` is for use outside it (the composition root aside).
 */
export { contentDisposition, DOCUMENT_POLICY } from './document.js';
export { getProofDocument } from './service.js';
