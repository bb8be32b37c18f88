/**
 * The local mail outbox (docs/architecture.md, People): where mail lands when SMTP_URL is unset, shown by
 * the sandbox at /dev/outbox. Kept in the database so that every process of one deployment sees it.
 */
import type { DataSource } from 'typeorm';

export interface OutboxMail { id: string; to: string; subject: string; text: string; createdAt: Date }

export class OutboxStore {
  constructor(private readonly ds: DataSource) {}

  async add(to: string, subject: string, text: string): Promise<string> {
    // Mail carries live links: nothing is kept past the longest link's life (an invitation's 7 days).
    await this.ds.query("DELETE FROM mail_outbox WHERE created_at < now() - interval '7 days'");
    const rows: { id: string }[] = await this.ds.query('INSERT INTO mail_outbox (to_address, subject, text_body) VALUES ($1, $2, $3) RETURNING id', [to, subject, text]);
    return rows[0]!.id;
  }

  /** The newest mails first, at most `limit`. */
  async latest(limit: number): Promise<OutboxMail[]> {
    const rows: { id: string; to_address: string; subject: string; text_body: string; created_at: Date }[] = await this.ds.query(
      'SELECT id, to_address, subject, text_body, created_at FROM mail_outbox ORDER BY seq DESC LIMIT $1', [limit]);
    return rows.map((r) => ({ id: r.id, to: r.to_address, subject: r.subject, text: r.text_body, createdAt: r.created_at }));
  }
}
