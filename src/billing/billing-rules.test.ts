import { checkAmount, checkCurrency, checkExtended, checkPeriod, monthsOf, roundMoney, type Problem } from './billing-rules';

describe('billing value rules', () => {
  it('refuses impossible days and an end before the start, and accepts a real period', () => {
    const p: Problem[] = [];
    checkPeriod(p, '2026-02-30', '2026-02-01');
    expect(p.map((x) => x.field)).toEqual(['period_start']);
    const q: Problem[] = [];
    checkPeriod(q, '2026-03-01', '2026-02-28');
    expect(q).toEqual([{ field: 'period_end', message: 'must not be before period_start (2026-03-01)' }]);
    const ok: Problem[] = [];
    checkPeriod(ok, '2026-02-01', '2026-02-28');
    expect(ok).toEqual([]);
  });

  it('takes ISO 4217 codes in any case and refuses others', () => {
    const p: Problem[] = [];
    expect(checkCurrency(p, 'usd')).toBe('USD');
    checkCurrency(p, 'XYZ');
    checkCurrency(p, 'US');
    expect(p).toHaveLength(2);
  });

  it('checks the extended amount within one cent, and negatives and infinities', () => {
    const p: Problem[] = [];
    checkExtended(p, 'msp_cost_extended', 0.3, 0.1, 'msp_cost_unit', 3);
    checkExtended(p, 'msp_cost_extended', 100.02, 2.5, 'msp_cost_unit', 40);
    expect(p.map((x) => x.field)).toEqual(['msp_cost_extended']);
    const q: Problem[] = [];
    checkAmount(q, 'actual_quantity', -1);
    checkAmount(q, 'billable_quantity', Infinity);
    checkExtended(q, 'msp_cost_extended', 1, 1e300, 'msp_cost_unit', 1e300);
    expect(q).toHaveLength(3);
  });

  it('counts calendar months and rounds money to cents', () => {
    expect(monthsOf('2026-10-01', '2026-11-30')).toBe(2);
    expect(monthsOf('2026-11-01', '2026-11-30')).toBe(1);
    expect(monthsOf('2025-12-15', '2026-01-14')).toBe(2);
    expect(roundMoney(-0.001)).toBe(0);
    expect(roundMoney(10.005 + 0.0001)).toBe(10.01);
  });
});
