/**
 * The one rule of which email a single sign-on configuration covers (docs/architecture.md, Single
 * sign-on): an email is covered when its domain, in ASCII lower case, is exactly one of the domains the
 * owner listed. Subdomains are not covered implicitly (`eu.acme.com` is listed on its own), so a
 * configuration never reaches further than what the owner wrote.
 */
import { domainToASCII } from 'node:url';
import net from 'node:net';

/** At most this many domains per configuration: a company's few mail domains, not a list of the internet's. */
export const MAX_DOMAINS = 20;

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

export class DomainRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DomainRefused';
  }
}

/** A domain as typed (`Acme.COM`, `@acme.com`, `bücher.de`) in the form it is stored and compared; refuses what is not a domain name. */
export function normaliseDomain(raw: string): string {
  const typed = raw.trim().replace(/^@/, '').replace(/\.$/, '');
  if (!typed) throw new DomainRefused('A domain is empty.');
  // domainToASCII drops a path or port silently (`acme.com/x` becomes `acme.com`): such text is refused first.
  if (/[\s/\\:?#@[\]%]/.test(typed)) throw new DomainRefused(`"${typed}" is not a domain name.`);
  const ascii = domainToASCII(typed.toLowerCase());
  if (!ascii || ascii.length > 253 || net.isIP(ascii)) throw new DomainRefused(`"${typed}" is not a domain name.`);
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l)) || /^[0-9]+$/.test(labels[labels.length - 1]!)) {
    throw new DomainRefused(`"${typed}" is not a domain name (write it like acme.com).`);
  }
  return ascii;
}

/** The domains of a settings field (one per line, or separated by commas or spaces), normalised and without repeats. */
export function parseDomainList(text: string): string[] {
  const parts = text.split(/[\s,;]+/).filter(Boolean);
  const domains = [...new Set(parts.map(normaliseDomain))];
  if (domains.length === 0) throw new DomainRefused('Name at least one email domain.');
  if (domains.length > MAX_DOMAINS) throw new DomainRefused(`At most ${MAX_DOMAINS} domains.`);
  return domains;
}

/** The domain of an email address in the stored form, or null when the address has none we can read. */
export function domainOfEmail(email: string): string | null {
  const at = email.trim().lastIndexOf('@');
  if (at < 1) return null;
  try {
    return normaliseDomain(email.trim().slice(at + 1));
  } catch {
    return null;
  }
}

/** Whether the email's domain is one of `domains` (stored form). */
export function emailCovered(email: string, domains: readonly string[]): boolean {
  const domain = domainOfEmail(email);
  return domain !== null && domains.includes(domain);
}
