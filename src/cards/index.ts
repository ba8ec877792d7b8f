/**
 * The card vault's face: what other features may use of it. The gateway seals, stores, finds,
 * reveals and tokenizes cards; everyone who takes a card validates its input with the card rules and
 * shows it as a `CardRecord`; billing reads the cards of the subscriptions it renews. Nothing else of
 * `cards/` is for use outside it (the composition root aside).
 */
export {
  type CardRow,
  cardInsert,
  cardInsertCte,
  findCardRowsByTokens,
  type NewCardRow,
  storedCardRow,
} from './repository.js';
export { tokenizeCard, updateCard } from './service.js';
export {
  CardChanges,
  type CardInput,
  CardMsg,
  cardSchema,
  isExpired,
  TokenizeCard,
  validateCardInput,
} from './validation.js';
export { type CardRecord, findCard, revealNumber, sealCard, toCardRecord } from './vault.js';
