import { budgetChars, recordsThatFit } from './answer-budget';

describe('recordsThatFit', () => {
  // A page {"items":[A,B,C],"next_cursor":null}: records of 10, 20 and 30 characters.
  const envelope = '{"items":[],"next_cursor":null}'.length;
  const page = envelope + 10 + 20 + 30 + 2;

  it('keeps every record when the page fits', () => {
    expect(recordsThatFit(page, [10, 20, 30], page)).toBe(3);
  });
  it('drops records from the end, counting the comma between two', () => {
    expect(recordsThatFit(page, [10, 20, 30], envelope + 10 + 1 + 20)).toBe(2);
    expect(recordsThatFit(page, [10, 20, 30], envelope + 10 + 1 + 19)).toBe(1);
  });
  it('keeps room for the reserve', () => {
    expect(recordsThatFit(page, [10, 20, 30], page, 1)).toBe(2);
  });
  it('answers 0 when even the first record does not fit', () => {
    expect(recordsThatFit(page, [10, 20, 30], envelope + 9)).toBe(0);
  });
  it('a budget in tokens is three characters a token', () => {
    expect(budgetChars(25_000)).toBe(75_000);
  });
});
