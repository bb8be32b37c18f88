/**
 * The budget of one MCP tool answer (docs/architecture.md, MCP): agents cut or refuse a tool result past
 * their own limit (Claude Code at 25,000 tokens by default), so a list page is made to fit before it is
 * sent. Tokens are estimated from characters: JSON of ids, timestamps and short values runs at about
 * three characters a token, fewer than prose's four, so the estimate errs towards a smaller page.
 * Only whole records are kept, and the page's own `next_cursor` carries on after the last one kept.
 */

/** Characters per token in the estimate (see above). */
export const CHARS_PER_TOKEN = 3;

/** The characters a budget of `tokens` allows. */
export function budgetChars(tokens: number): number {
  return tokens * CHARS_PER_TOKEN;
}

/**
 * How many of a page's records fit `budget` characters, in order, given the page's JSON text and each
 * record's JSON length: the envelope (next_cursor and the rest) stays, records are dropped from the end.
 * `reserve`: characters kept free for the line that describes the page. 0: not even the first fits.
 */
export function recordsThatFit(pageChars: number, recordChars: readonly number[], budget: number, reserve = 0): number {
  // The records' text inside the page: each record, and a comma between two.
  const recordsText = recordChars.reduce((sum, n) => sum + n, 0) + Math.max(0, recordChars.length - 1);
  const envelope = pageChars - recordsText;
  let used = envelope + reserve;
  for (let i = 0; i < recordChars.length; i++) {
    used += recordChars[i] + (i > 0 ? 1 : 0);
    if (used > budget) return i;
  }
  return recordChars.length;
}
