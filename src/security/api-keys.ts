/** API keys: shown once at issue, stored as SHA-256 with a display prefix. */
import { createHash, randomBytes } from 'node:crypto';

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

function generate(prefix: string): { key: string; prefix: string; hash: string } {
  const key = `${prefix}${randomBytes(24).toString('base64url')}`;
  return { key, prefix: displayPrefix(key), hash: hashApiKey(key) };
}

/** An ISV's key. */
export function generateApiKey(): { key: string; prefix: string; hash: string } {
  return generate('sk_live_');
}

/** An MSP's key for its own tenant. */
export function generateMspKey(): { key: string; prefix: string; hash: string } {
  return generate('sk_msp_');
}

export function displayPrefix(key: string): string {
  return key.slice(0, 12);
}
