/**
 * What a reader of an e-mail's HTML sees: the text between its tags, entities decoded. Escaping is
 * the renderer's business (which characters it spells as entities is its own); what a test asks is
 * that a shop's or buyer's words show as written, and that none of them became an element.
 */
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'" };

export const visibleText = (html: string): string =>
  html
    .replace(/<[^>]*>/g, '')
    .replace(/&(amp|lt|gt|quot|#39|apos);/g, (_, name: string) => ENTITIES[name] ?? '');
