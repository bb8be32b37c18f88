/**
 * Mail without SMTP_URL (docs/architecture.md, People): it lands in the local outbox on the real database,
 * and the log names the recipient and the outbox id, never the link, except in development.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { openDatabase, type Database } from '../db/database';
import { testDatabaseOptions } from '../../test/support/runtime';
import { Mailer } from './mailer';
import { OutboxStore } from './outbox.store';

let db: Database;
beforeAll(async () => { db = await openDatabase(testDatabaseOptions()); }, 60_000);
afterAll(async () => { await db?.close(); });

function capturingLogger(): { logger: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } });
  return { logger: pino({ level: 'info' }, stream), lines };
}

const mail = { to: 'someone@outbox.example', subject: 'Your sign-in link', text: 'Open https://service.example/sign-in/link/SECRETTOKEN0000000000000000000000000000000 once.' };

describe('the local outbox', () => {
  it('keeps the mail and logs where it went, never its link', async () => {
    const outbox = new OutboxStore(db.dataSource);
    const { logger, lines } = capturingLogger();
    await new Mailer({ smtpUrl: undefined, from: 'x@y.example', development: false }, outbox, logger).send(mail);
    const [kept] = await outbox.latest(1);
    expect(kept).toMatchObject({ to: mail.to, subject: mail.subject, text: mail.text });
    const logged = lines.join('');
    expect(logged).toContain(mail.to);
    expect(logged).toContain(kept!.id);
    expect(logged).not.toContain('SECRETTOKEN');
  });

  it('in development the log carries the text, so a developer can follow the link', async () => {
    const { logger, lines } = capturingLogger();
    await new Mailer({ smtpUrl: undefined, from: 'x@y.example', development: true }, new OutboxStore(db.dataSource), logger).send(mail);
    expect(lines.join('')).toContain('SECRETTOKEN');
  });
});
