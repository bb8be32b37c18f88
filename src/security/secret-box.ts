/**
 * AES-256-GCM for values kept at rest (vendor credentials, webhook secrets): a fresh 12-byte IV per
 * value, the auth tag checked on open. Format: `v1.<iv b64url>.<tag b64url>.<ciphertext b64url>`.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key');
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
  }

  open(sealed: string): string {
    const [v, iv, tag, ct] = sealed.split('.');
    if (v !== 'v1' || !iv || !tag || ct === undefined) throw new Error('not a sealed value');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  }

  sealJson(value: unknown): string {
    return this.seal(JSON.stringify(value));
  }
  openJson<T>(sealed: string): T {
    return JSON.parse(this.open(sealed)) as T;
  }

  private readonly digestKeys = new Map<string, Buffer>();

  /**
   * A keyed digest (HMAC-SHA-256, 128 bits, base64url) of `text` for one `purpose`, under a key derived
   * from this box's (HKDF), never the box's key itself: every process of a deployment shares it, and it
   * shows that a value we issued (a list's cursor) comes back as we issued it.
   */
  digest(purpose: string, text: string): string {
    let key = this.digestKeys.get(purpose);
    if (!key) this.digestKeys.set(purpose, (key = Buffer.from(hkdfSync('sha256', this.key, '', `digest:${purpose}`, 32))));
    return createHmac('sha256', key).update(text, 'utf8').digest().subarray(0, 16).toString('base64url');
  }
}
