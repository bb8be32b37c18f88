/**
 * Sending mail (docs/architecture.md, People): through nodemailer to SMTP_URL, or, without it, into the
 * local outbox (the database) that the sandbox shows at /dev/outbox. The log names where a mail went and
 * to whom, never its text (it carries a sign-in link) except with NODE_ENV=development.
 */
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { OutboxStore } from './outbox.store';

export interface Mail { to: string; subject: string; text: string }

export class Mailer {
  private readonly transport: Transporter | null;

  constructor(
    private readonly opts: { smtpUrl: string | undefined; from: string; development: boolean },
    private readonly outbox: OutboxStore,
    private readonly logger: Logger,
  ) {
    this.transport = opts.smtpUrl ? nodemailer.createTransport(opts.smtpUrl) : null;
  }

  async send(mail: Mail): Promise<void> {
    if (this.transport) {
      await this.transport.sendMail({ from: this.opts.from, to: mail.to, subject: mail.subject, text: mail.text });
      this.logger.info({ mail_to: mail.to, subject: mail.subject }, 'mail sent over SMTP');
      return;
    }
    const id = await this.outbox.add(mail.to, mail.subject, mail.text);
    this.logger.info({ mail_to: mail.to, subject: mail.subject, outbox_id: id, ...(this.opts.development ? { text: mail.text } : {}) },
      'mail kept in the local outbox (SMTP_URL is unset; the sandbox shows it at /dev/outbox)');
  }

  close(): void {
    this.transport?.close();
  }
}
