import { CandidateIndex, companyDetails, domainOf, phoneOf, prepare, rank, scorePair } from './candidates';

const companies = [
  { id: '1', name: 'Contoso Ltd', website: 'www.contoso.com', phone: '(206) 555-0142', identifier: 'ContosoLtd' },
  { id: '2', name: 'Contoso East Holdings', website: 'contoso-east.com', phone: '(206) 555-0999', identifier: 'ContosoEast' },
  { id: '3', name: 'Fourth Coffee', website: 'www.fourthcoffee.com', phone: '(720) 555-0133', identifier: 'FourthCoffee' },
  { id: '4', name: 'Lakeshore Family Dental', website: 'www.lakeshorefamilydental.com', phone: '(847) 555-0112', identifier: 'LakeshoreDentalEv' },
  { id: '5', name: 'Lakeshore Family Dental', website: 'www.lakeshorefamilydental.com', phone: '(708) 555-0146', identifier: 'LakeshoreDentalOP' },
  { id: '6', name: 'AdventureWorks', website: null, phone: null, identifier: null },
  { id: '7', name: "Margie's Travel", website: 'www.margiestravel.com', phone: null, identifier: 'MargiesTravel' },
];
const items = companies.map((c) => ({ item: c, key: c.id, prepared: prepare({ name: c.name, ids: [c.identifier], domain: c.website, phone: c.phone }) }));
const best = (name: string, extra: { ids?: string[]; domain?: string; phone?: string } = {}, search = false) =>
  rank(prepare({ name, ...extra }), items, { limit: 5, search }).map((r) => ({ id: r.item.id, score: r.score, reasons: r.reasons }));

describe('identity candidates, best first', () => {
  it('an exact name first, then the same normal form (case, punctuation, legal suffixes)', () => {
    expect(best('Contoso Ltd')[0]).toEqual({ id: '1', score: 0.9, reasons: ['exact_name'] });
    expect(best('CONTOSO LIMITED')[0]).toEqual({ id: '1', score: 0.85, reasons: ['normalized_name'] });
    expect(best('Contoso, Inc.')[0]).toMatchObject({ id: '1', reasons: ['normalized_name'] });
    expect(best('Adventure Works')[0]).toMatchObject({ id: '6', reasons: ['normalized_name'] });
  });

  it('shared words rank a differently spelled name, above a name that shares fewer', () => {
    const found = best('Fourth Coffee Roasters Limited');
    expect(found[0]).toMatchObject({ id: '3', reasons: ['similar_name'] });
    expect(found[0].score).toBeGreaterThan(0.5);
    const contoso = best('Contoso Seattle Office');
    expect(contoso[0].id).toBe('1');
    expect(contoso.map((c) => c.id)).toContain('2');
    expect(best('Margies Travel Agency')[0]).toMatchObject({ id: '7', reasons: ['similar_name'] });
    // One typo in a long word still counts.
    expect(best('Lakeshore Famly Dental')[0].reasons).toEqual(['similar_name']);
  });

  it('offers nothing that shares nothing', () => {
    expect(best('Zephyr Analytics')).toEqual([]);
  });

  it('a search finds names from the start of a word', () => {
    expect(best('lakesh', {}, true).map((c) => c.id)).toEqual(['4', '5']);
    expect(best('coffee', {}, true)[0].id).toBe('3');
  });

  it('the external id, the domain and the phone count, and tell two companies of one name apart', () => {
    expect(best('Lakeshore Family Dental', { phone: '+1 708-555-0146' })[0]).toMatchObject({ id: '5', reasons: ['exact_name', 'phone'] });
    // Ids compare without case and punctuation, whatever the names say.
    expect(best('Something else', { ids: ['lakeshore-dental-op'] })).toEqual([{ id: '5', score: 0.95, reasons: ['external_id'] }]);
    expect(best('Something else', { ids: ['cust-004'] })).toEqual([]);
    expect(best('Totally Different Name', { domain: 'https://fourthcoffee.com/about' })[0]).toMatchObject({ id: '3', reasons: ['domain'], score: 0.7 });
  });

  it('scores one pair, or says nothing ties it', () => {
    expect(scorePair(prepare({ name: 'Contoso Limited' }), prepare({ name: 'Contoso Ltd' }))).toEqual({ score: 0.85, reasons: ['normalized_name'] });
    expect(scorePair(prepare({ name: 'Zephyr' }), prepare({ name: 'Contoso Ltd' }))).toBeNull();
  });

  it('the index ranks as rank does, scoring only what shares something', () => {
    const index = new CandidateIndex(companies.map((c) => ({ item: c, key: c.id, party: { name: c.name, ids: [c.identifier], domain: c.website, phone: c.phone } })));
    expect(index.best({ name: 'Fourth Coffee Roasters Limited' }, 3).map((r) => r.item.id)).toEqual(best('Fourth Coffee Roasters Limited').slice(0, 3).map((c) => c.id));
    expect(index.best({ name: 'Lakeshore Family Dental' }, 5).map((r) => r.item.id)).toEqual(['4', '5']);
    expect(index.best({ name: 'Nothing Here', domain: 'contoso.com' }, 5).map((r) => r.item.id)).toEqual(['1']);
  });
});

describe('what a PSA record says beside the name', () => {
  it('reads ConnectWise, Autotask and HaloPSA records', () => {
    expect(companyDetails({ city: 'Seattle', phoneNumber: '(206) 555-0142', website: 'www.contoso.com' })).toEqual({ city: 'Seattle', phone: '(206) 555-0142', domain: 'contoso.com', external_ids: [] });
    expect(companyDetails({ city: 'Austin', phone: '512-555-0100', webAddress: 'https://www.fabrikam.com/', companyNumber: 'C-1001' })).toEqual({ city: 'Austin', phone: '512-555-0100', domain: 'fabrikam.com', external_ids: ['C-1001'] });
    expect(companyDetails({ website: 'https://www.kestrelanalytics.io', main_site_name: 'Reading', ref: 'KES01' })).toEqual({ city: 'Reading', phone: null, domain: 'kestrelanalytics.io', external_ids: ['KES01'] });
    expect(companyDetails(null)).toEqual({ city: null, phone: null, domain: null, external_ids: [] });
  });

  it('domains and phone numbers compare on what matters', () => {
    expect(domainOf('HTTPS://WWW.Contoso.com/about?x=1')).toBe('contoso.com');
    expect(domainOf('info@contoso.com')).toBe('contoso.com');
    expect(domainOf('not a domain')).toBeNull();
    expect(phoneOf('+1 (206) 555-0142')).toBe(phoneOf('206.555.0142'));
    expect(phoneOf('555')).toBeNull();
  });
});
