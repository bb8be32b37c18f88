/**
 * Access changes (a key revoked, grants changed, a tenant removed) reach every api process at once:
 * the process that made the change clears its own caches and publishes on Redis; every other process
 * clears its caches when the message arrives (milliseconds), instead of serving the old answer for the
 * caches' 5 s. Without REDIS_URL there is one process, and clearing its caches is all there is to do.
 */
import { Redis } from 'ioredis';

export class AccessBroadcast {
  private readonly pub: Redis;
  private readonly sub: Redis;
  private readonly channel: string;

  constructor(redisUrl: string, prefix: string, onRemoteChange: () => void) {
    this.channel = `${prefix}:access-changed`;
    this.pub = new Redis(redisUrl, { maxRetriesPerRequest: 2 });
    this.sub = new Redis(redisUrl, { maxRetriesPerRequest: null });
    void this.sub.subscribe(this.channel).catch(() => undefined);
    this.sub.on('message', (channel) => { if (channel === this.channel) onRemoteChange(); });
  }

  announce(): Promise<void> {
    return this.pub.publish(this.channel, String(Date.now())).then(() => undefined, () => undefined);
  }

  async close(): Promise<void> {
    await Promise.all([this.pub.quit().catch(() => undefined), this.sub.quit().catch(() => undefined)]);
  }
}
