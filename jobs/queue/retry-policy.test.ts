import { Backoffs } from 'bullmq';
import { computeBackoffDelay, finalError, isUnrecoverable, retryDelayMs } from './retry-policy';
import { BackoffOptions, RetryAfterError, UnrecoverableJobError } from './types';

describe('computeBackoffDelay', () => {
  it('doubles the base delay per failed attempt (exponential) and keeps it (fixed)', () => {
    const exponential: BackoffOptions = { type: 'exponential', delay: 100 };
    expect([1, 2, 3, 4].map((n) => computeBackoffDelay(exponential, n))).toEqual([100, 200, 400, 800]);
    expect([1, 2, 3].map((n) => computeBackoffDelay({ type: 'fixed', delay: 70 }, n))).toEqual([70, 70, 70]);
    expect(computeBackoffDelay(undefined, 3)).toBe(0);
  });

  it('jitter only ever shortens the delay, by at most the jitter share', () => {
    const backoff: BackoffOptions = { type: 'exponential', delay: 100, jitter: 0.3 };
    expect(computeBackoffDelay(backoff, 3, () => 0)).toBe(280); // 400 reduced by the full 30 %
    expect(computeBackoffDelay(backoff, 3, () => 0.5)).toBe(340);
    for (let i = 0; i < 200; i++) {
      const delay = computeBackoffDelay(backoff, 3);
      expect(delay).toBeGreaterThanOrEqual(280);
      expect(delay).toBeLessThanOrEqual(400);
    }
  });

  it("gives the same delays as BullMQ's built-in strategies for the same random draws", () => {
    const draws = [0, 0.13, 0.5, 0.77, 0.999];
    const cases: BackoffOptions[] = [
      { type: 'exponential', delay: 250, jitter: 0.5 },
      { type: 'exponential', delay: 33 },
      { type: 'fixed', delay: 1000, jitter: 0.2 },
    ];
    const random = jest.spyOn(Math, 'random');
    try {
      for (const backoff of cases) {
        for (const attemptsMade of [1, 2, 5]) {
          for (const draw of draws) {
            random.mockReturnValue(draw);
            const bullmq = Backoffs.builtinStrategies[backoff.type](backoff.delay, backoff.jitter)(attemptsMade);
            expect(computeBackoffDelay(backoff, attemptsMade, () => draw)).toBe(bullmq);
          }
        }
      }
    } finally {
      random.mockRestore();
    }
  });
});

describe('retry decisions', () => {
  it("a RetryAfterError's delay replaces the backoff schedule", () => {
    expect(retryDelayMs(new RetryAfterError(1234), { type: 'exponential', delay: 10 }, 4)).toBe(1234);
    expect(retryDelayMs(new Error('x'), { type: 'exponential', delay: 10 }, 4, () => 0)).toBe(80);
  });

  it("a RetryAfterError that ends the job fails it with the vendor's error, not with 'retry after'", () => {
    expect(finalError(new RetryAfterError(50, new Error('HTTP 429 Too Many Requests'))).message).toBe(
      'HTTP 429 Too Many Requests',
    );
    expect(finalError(new RetryAfterError(50)).message).toBe('retry after 50 ms');
  });

  it('recognises unrecoverable errors, ours and BullMQ-named ones', () => {
    expect(isUnrecoverable(new UnrecoverableJobError('bad credentials'))).toBe(true);
    expect(isUnrecoverable(Object.assign(new Error('x'), { name: 'UnrecoverableError' }))).toBe(true);
    expect(isUnrecoverable(new Error('timeout'))).toBe(false);
  });
});
