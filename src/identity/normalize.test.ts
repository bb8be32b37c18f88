import { normalizeName } from './normalize';

describe('normalizeName', () => {
  it.each([
    ['Contoso Ltd', 'contoso'],
    ['CONTOSO LTD.', 'contoso'],
    ['  Contoso   Limited ', 'contoso'],
    ['Acme Co., Inc.', 'acme'],
    ['Acme, L.L.C.', 'acme'],
    ['Fenwick & Marsh Solicitors', 'fenwick and marsh solicitors'],
    ['Fenwick and Marsh Solicitors', 'fenwick and marsh solicitors'],
    ["Margie's Travel", 'margie s travel'],
    ['Café Müller GmbH', 'cafe muller'],
    ['Lakeshore Family Dental', 'lakeshore family dental'],
    ['Company', 'company'],
    ['Inc', 'inc'],
    ['Trey Research Corp.', 'trey research'],
  ])('%s -> %s', (name, expected) => {
    expect(normalizeName(name)).toBe(expected);
  });

  it('keeps names that differ in more than case, punctuation or suffix apart', () => {
    expect(normalizeName('Contoso East')).not.toBe(normalizeName('Contoso'));
    expect(normalizeName('Coho Winery')).not.toBe(normalizeName('Coho Vineyard'));
  });
});
