import { DomainRefused, domainOfEmail, emailCovered, MAX_DOMAINS, normaliseDomain, parseDomainList } from './sso-domains';

describe('SSO email domains', () => {
  it('normalises what an owner types to one stored form', () => {
    expect(normaliseDomain(' @Acme.COM. ')).toBe('acme.com');
    expect(normaliseDomain('bücher.de')).toBe('xn--bcher-kva.de');
    expect(parseDomainList('acme.com, ACME.com\neu.acme.com;acme.co.uk')).toEqual(['acme.com', 'eu.acme.com', 'acme.co.uk']);
  });

  it('refuses what is not a domain name', () => {
    for (const bad of ['', 'localhost', '127.0.0.1', 'acme..com', '-acme.com', 'acme.com/x', 'a b.com', 'acme.123']) {
      expect(() => normaliseDomain(bad)).toThrow(DomainRefused);
    }
    expect(() => parseDomainList(' , ')).toThrow('at least one');
    expect(() => parseDomainList(Array.from({ length: MAX_DOMAINS + 1 }, (_, i) => `d${i}.com`).join(','))).toThrow(`At most ${MAX_DOMAINS}`);
  });

  it('covers an email only by an exact domain, never a subdomain or a look-alike', () => {
    const domains = ['acme.com'];
    expect(emailCovered('Alice@ACME.com', domains)).toBe(true);
    expect(emailCovered('alice@eu.acme.com', domains)).toBe(false);
    expect(emailCovered('alice@acme.com.evil.test', domains)).toBe(false);
    expect(emailCovered('acme.com@evil.test', domains)).toBe(false);
    expect(emailCovered('not-an-email', domains)).toBe(false);
    expect(domainOfEmail('"a@b"@acme.com')).toBe('acme.com');
  });
});
