/**
 * The secrets of people's sign-in (links, invitations, session cookies): 32 random bytes, base64url, of
 * which only the SHA-256 is stored. One module so that every token has the same shape and hash.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const newToken = (): string => randomBytes(32).toString('base64url');
export const hashOf = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');
/** What a token looks like (43 base64url characters); anything else is looked up nowhere. */
export const tokenShaped = (t: string): boolean => /^[A-Za-z0-9_-]{43}$/.test(t);

/** Constant-time comparison of two strings (a CSRF token against the expected one). */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
