/**
 * The one normalisation of company and customer names, used by auto-match, company create, contact
 * match and mapping suggestions. Two names are the same company when their normal forms are equal:
 * - case and accents do not matter ("Café" = "cafe");
 * - `&` is "and"; punctuation is a space; runs of white space are one space;
 * - common legal suffixes at the end are dropped, repeatedly: Inc, Incorporated, LLC, L.L.C., Ltd,
 *   Limited, Corp, Corporation, Co, Company, PLC, LLP, LP, GmbH, AG, SA, BV, NV, Pty, PC, PLLC
 *   ("Contoso Ltd." = "contoso", "Acme Co., Inc." = "acme");
 * - a name that is nothing but a suffix keeps it ("Company" stays "company").
 */
const LEGAL_SUFFIXES = new Set([
  'inc', 'incorporated', 'llc', 'ltd', 'limited', 'corp', 'corporation', 'co', 'company', 'plc', 'llp', 'lp',
  'gmbh', 'ag', 'sa', 'bv', 'nv', 'pty', 'pc', 'pllc',
]);

export function normalizeName(name: string): string {
  const words = name
    .normalize('NFKD').replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    // L.L.C. and similar dotted abbreviations become one word before punctuation is dropped.
    .replace(/\b(?:[a-z]\.){2,}/g, (m) => m.replace(/\./g, ''))
    .replace(/&/g, ' and ')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
    .split(' ')
    .filter(Boolean);
  while (words.length > 1 && LEGAL_SUFFIXES.has(words[words.length - 1])) words.pop();
  return words.join(' ');
}
