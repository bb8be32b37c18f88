/**
 * The receiver URL guard: only public addresses over https; loopback only under the local-testing
 * flag; every DNS answer checked; and the connection pinned to the address that was checked.
 * No test here opens a connection: refusals happen before any network use, DNS is injected.
 */
import { BLOCKED_PRIVATE, checkReceiverUrl, classifyAddress, pinnedLookup, ReceiverUrlRefused, type HostResolver } from './ssrf-guard';

const dnsAnswer = (...addresses: string[]): HostResolver => async () =>
  addresses.map((address) => ({ address, family: address.includes(':') ? 6 as const : 4 as const }));
const noDns: HostResolver = async (host) => { throw new Error(`unexpected DNS lookup of ${host}`); };

async function refusal(url: string, allowLoopback = false, resolve: HostResolver = noDns): Promise<ReceiverUrlRefused> {
  try {
    await checkReceiverUrl(url, { allowLoopback, resolve });
  } catch (err) {
    if (err instanceof ReceiverUrlRefused) return err;
    throw err;
  }
  throw new Error(`${url} was accepted`);
}

describe('classifyAddress', () => {
  it.each([
    '10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.254', '192.168.1.5', // RFC 1918
    '169.254.169.254', // link-local (cloud metadata)
    '100.64.0.1', '100.127.255.254', // CGNAT
    '224.0.0.1', '239.255.255.250', '255.255.255.255', // multicast, broadcast
    '0.0.0.0', '0.1.2.3', // unspecified
    '192.0.2.10', '198.51.100.7', '203.0.113.9', '198.18.0.1', '240.0.0.1', // documentation, benchmarking, reserved
    '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', // unspecified, link-local, ULA, multicast
    '::ffff:10.0.0.1', '::ffff:8.8.8.8', '::ffff:127.0.0.1', // IPv4-mapped: never, whatever it embeds
    '64:ff9b::a00:1', '2002:a00:1::1', '2001:0:4136:e378::1', '2001:db8::1', '::a00:1', '100::1',
  ])('%s is blocked', (ip) => {
    expect(classifyAddress(ip)).toBe('blocked');
  });

  it.each(['127.0.0.1', '127.1.2.3', '::1'])('%s is loopback', (ip) => {
    expect(classifyAddress(ip)).toBe('loopback');
  });

  it.each(['8.8.8.8', '93.184.216.34', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '2a00:1450:4001::200e'])('%s is public', (ip) => {
    expect(classifyAddress(ip)).toBe('public');
  });
});

describe('checkReceiverUrl', () => {
  it.each(['https://10.0.0.1/hook', 'https://192.168.1.5/x', 'https://[::1]/x', 'https://127.0.0.1/x', 'https://[::ffff:10.0.0.1]/x',
    'https://169.254.169.254/latest/meta-data', 'https://0x7f.1/x', 'https://2130706433/x'])('refuses %s as a private address', async (url) => {
    const err = await refusal(url);
    expect(err.reason).toBe('private');
    expect(err.message).toBe(BLOCKED_PRIVATE);
  });

  it('refuses http:// and other schemes, and URLs carrying credentials', async () => {
    expect((await refusal('http://93.184.216.34/hook')).message).toBe('url must use https://.');
    expect((await refusal('ftp://93.184.216.34/hook')).message).toBe('url must use https://.');
    expect((await refusal('https://user:pw@93.184.216.34/hook')).message).toBe('url must not carry credentials.');
    expect((await refusal('not a url')).reason).toBe('invalid');
  });

  it('refuses a name when any of its addresses is private, and one that does not resolve', async () => {
    expect((await refusal('https://hooks.example.com/x', false, dnsAnswer('93.184.216.34', '10.1.2.3'))).reason).toBe('private');
    expect((await refusal('https://hooks.example.com/x', false, dnsAnswer('fd00::5'))).reason).toBe('private');
    expect((await refusal('https://nowhere.example.com/x', false, async () => { throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' }); })).reason)
      .toBe('unresolvable');
  });

  it('accepts a public name and pins the address it checked', async () => {
    const ok = await checkReceiverUrl('https://hooks.example.com/msp?x=1', { allowLoopback: false, resolve: dnsAnswer('93.184.216.34', '2606:2800:220:1::1') });
    expect(ok).toMatchObject({ address: '93.184.216.34', family: 4 });
    expect(ok.url.href).toBe('https://hooks.example.com/msp?x=1');
  });

  it('catches a name that was public at registration and resolves private later (DNS rebinding)', async () => {
    let calls = 0;
    const rebinding: HostResolver = async () => [{ address: ++calls === 1 ? '93.184.216.34' : '10.0.0.7', family: 4 }];
    await expect(checkReceiverUrl('https://rebind.example.com/x', { allowLoopback: false, resolve: rebinding })).resolves.toMatchObject({ address: '93.184.216.34' });
    expect((await refusal('https://rebind.example.com/x', false, rebinding)).message).toBe(BLOCKED_PRIVATE);
  });

  it('admits loopback over http only under the local-testing flag, and nothing else private', async () => {
    await expect(checkReceiverUrl('http://127.0.0.1:8080/hook', { allowLoopback: true, resolve: noDns })).resolves.toMatchObject({ address: '127.0.0.1' });
    await expect(checkReceiverUrl('http://localhost:8080/hook', { allowLoopback: true, resolve: dnsAnswer('127.0.0.1', '::1') }))
      .resolves.toMatchObject({ address: '127.0.0.1' });
    expect((await refusal('http://127.0.0.1:8080/hook')).message).toBe(BLOCKED_PRIVATE);
    expect((await refusal('http://localhost:8080/hook')).message).toBe('url must use https://.');
    expect((await refusal('http://10.0.0.1/hook', true)).reason).toBe('private');
    expect((await refusal('http://93.184.216.34/hook', true)).message).toBe('url must use https://.');
    expect((await refusal('http://localhost/x', true, dnsAnswer('127.0.0.1', '10.0.0.1'))).reason).toBe('private');
  });

  it('under the flag, admits no other http host: a public one, or one that does not resolve, needs https as without it', async () => {
    const nxdomain: HostResolver = async () => { throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }); };
    for (const resolve of [nxdomain, dnsAnswer()]) {
      const err = await refusal('http://example.com/hook', true, resolve);
      expect([err.reason, err.message]).toEqual(['invalid', 'url must use https://.']);
    }
    expect((await refusal('http://example.com/hook', true, dnsAnswer('93.184.216.34'))).message).toBe('url must use https://.');
    // https to a host that does not resolve yet stays "may be passing", with or without the flag.
    expect((await refusal('https://example.com/hook', true, nxdomain)).reason).toBe('unresolvable');
  });
});

describe('pinnedLookup', () => {
  it('answers with the checked address whatever name is asked, in both callback shapes', () => {
    const lookup = pinnedLookup('93.184.216.34', 4) as unknown as (h: string, o: object, cb: (...a: unknown[]) => void) => void;
    const one = jest.fn();
    lookup('evil.example.com', {}, one);
    expect(one).toHaveBeenCalledWith(null, '93.184.216.34', 4);
    const all = jest.fn();
    lookup('evil.example.com', { all: true }, all);
    expect(all).toHaveBeenCalledWith(null, [{ address: '93.184.216.34', family: 4 }]);
  });
});
