/** Where a session lands and when its cookie is Secure (docs/architecture.md, People). */
import { landingOf, loopbackUrl } from './sessions';

describe('sessions', () => {
  it('a cookie is Secure unless the public URL is loopback', () => {
    expect(['http://127.0.0.1:3000', 'http://localhost:3000', 'http://[::1]:3000'].map(loopbackUrl)).toEqual([true, true, true]);
    expect(['https://msp.example', 'http://10.0.0.5:3000', 'http://127.example'].map(loopbackUrl)).toEqual([false, false, false]);
  });

  it('a session lands on its organisation\'s console', () => {
    expect(landingOf({ kind: 'tenant', id: 't' })).toBe('/console/health');
    expect(landingOf({ kind: 'isv', id: 'i' })).toBe('/app');
  });
});
