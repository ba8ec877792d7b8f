/**
 * Card brands as every page writes them: the platform's API spelling (`visa`, `master`, which the
 * API keeps) becomes the brand's own name ("Visa", "Mastercard"). A brand nobody knows is not
 * named at all: the card is its last four digits.
 */
const BRAND_NAMES: Record<string, string> = {
  visa: 'Visa',
  master: 'Mastercard',
  mastercard: 'Mastercard',
  maestro: 'Maestro',
  amex: 'American Express',
  discover: 'Discover',
  jcb: 'JCB',
  diners: 'Diners Club',
  unionpay: 'UnionPay',
  mir: 'Mir',
  belkart: 'Belkart',
};

export function brandName(brand: string | null | undefined): string | null {
  return (brand && BRAND_NAMES[brand.toLowerCase()]) ?? null;
}

/** A card as people recognise it, in every language: "Visa •••• 1097". */
export function cardText(card: { brand?: string | null; last_4: string }): string {
  const name = brandName(card.brand);
  return name ? `${name} •••• ${card.last_4}` : `•••• ${card.last_4}`;
}
