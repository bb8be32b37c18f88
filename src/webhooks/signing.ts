/**
 * Standard Webhooks signing (docs/architecture.md, Events and webhooks): `webhook-signature` is
 * `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` keyed with the base64 secret after `whsec_`.
 * Node's own HMAC, with the key decoded once per lane pass rather than once per try: the reference
 * library hashes in JavaScript, which was the largest cost of a try after the HTTP exchange itself.
 * signing.test.ts holds it to the reference library's signatures, byte for byte.
 */
import { createHmac } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

export class WebhookSigner {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
    if (this.key.length === 0) throw new Error('A webhook secret cannot be empty.');
  }

  /** The `webhook-signature` (and `Service-Signature`) value for this id, time and body. */
  sign(id: string, at: Date, body: string): string {
    const timestamp = Math.floor(at.getTime() / 1000);
    return `v1,${createHmac('sha256', this.key).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64')}`;
  }
}
