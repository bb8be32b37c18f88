/** The feed cursor: opaque to clients, base64url of the last event's seq. */
export function encodeEventCursor(seq: string): string {
  return Buffer.from(seq, 'utf8').toString('base64url');
}

/** The seq a cursor carries, or null when it is not one we issued. */
export function decodeEventCursor(cursor: string): string | null {
  if (!/^[A-Za-z0-9_-]{1,32}$/.test(cursor)) return null;
  const seq = Buffer.from(cursor, 'base64url').toString('utf8');
  return /^\d{1,18}$/.test(seq) ? seq : null;
}
