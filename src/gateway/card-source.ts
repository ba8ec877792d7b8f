import {
  type CardInput,
  CardMsg,
  type CardRow,
  findCard,
  isExpired,
  type NewCardRow,
  revealNumber,
  sealCard,
  storedCardRow,
} from '../cards/index.js';
import type { Ctx } from '../context.js';
import { ApiError } from '../core/errors.js';
import type { Queryable } from '../db/db.js';

/** Cards a caller has read already, by token: a batch of charges reads its cards in one query. */
export type KnownCards = ReadonlyMap<string, CardRow>;

/** The card a charge uses: its vault row and, for the acquirer's decision only, its clear number. */
export interface ChargeCard {
  row: CardRow;
  number: string;
  /** Only a stored card can have expired since; a new one was checked when it arrived. */
  expired: boolean;
  /** A card the request brought in full: sealed, to be stored by the statement recording the charge. */
  unstored?: NewCardRow;
}

/**
 * The card of a request: a token is looked up among the shop's cards (another shop's token does not
 * exist here); a full card is sealed under a new token and left for the caller to store (`unstored`).
 */
export async function cardOf(
  db: Queryable,
  ctx: Ctx,
  card: CardInput,
  now: Date,
  known?: KnownCards,
): Promise<ChargeCard> {
  if (card.kind === 'token') {
    const loaded = known?.get(card.token);
    // A card read beforehand counts only as the shop's own (another shop's token does not exist here).
    const row =
      loaded && loaded.shop_id === ctx.shop.id ? loaded : await findCard(db, ctx.shop.id, card.token);
    if (!row) throw ApiError.validation({ credit_card: { token: [CardMsg.unknownToken] } });
    return {
      row,
      number: revealNumber(ctx.masterKey, row),
      expired: isExpired(row.exp_month, row.exp_year, now),
    };
  }
  const unstored = sealCard(ctx.masterKey, ctx.shop.id, card);
  return { row: storedCardRow(unstored, now), number: card.number, expired: false, unstored };
}
