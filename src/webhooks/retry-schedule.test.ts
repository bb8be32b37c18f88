/** The delivery retry schedule and Retry-After. */
import { DELIVERY_ATTEMPTS, nextDelayMs, parseRetryAfterSeconds, RETRY_SCHEDULE_SECONDS } from './retry-schedule';

describe('retry schedule', () => {
  it('tries ten times: at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h', () => {
    expect(DELIVERY_ATTEMPTS).toBe(10);
    const delays = Array.from({ length: DELIVERY_ATTEMPTS - 1 }, (_, i) => nextDelayMs(i + 1, null, 1) / 1000);
    expect([RETRY_SCHEDULE_SECONDS[0], ...delays]).toEqual([0, 5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400]);
  });

  it('takes a longer Retry-After (seconds or HTTP date), never a shorter one, and caps it at a day', () => {
    const now = Date.parse('2026-11-22T10:00:00Z');
    expect(nextDelayMs(1, '60', 1, now)).toBe(60_000);
    expect(nextDelayMs(2, '60', 1, now)).toBe(300_000);
    expect(nextDelayMs(1, 'Sun, 22 Nov 2026 10:02:00 GMT', 1, now)).toBe(120_000);
    expect(nextDelayMs(1, '9999999', 1, now)).toBe(86_400_000);
    expect(nextDelayMs(1, 'soon', 1, now)).toBe(5_000);
    expect(parseRetryAfterSeconds(undefined)).toBeNull();
  });

  it('scales the unit for tests', () => {
    expect(nextDelayMs(2, null, 0.001)).toBe(300);
    expect(nextDelayMs(1, '60', 0.001)).toBe(60);
  });
});
