/** API keys: shown once at issue, stored as SHA-256 with a display prefix. */
import { createHash, randomBytes } from 'node:crypto';

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function generateApiKey(): { key: string; prefix: string; hash: string } {
  const key = `sk_live_${randomBytes(24).toString('base64url')}`;
  return { key, prefix: displayPrefix(key), hash: hashApiKey(key) };
}

export function displayPrefix(key: string): string {
  return key.slice(0, 12);
}
