import { listCursor, withCursorBinding, type CursorBinding } from './paging';
import { SecretBox } from '../security/secret-box';

const box = new SecretBox(Buffer.alloc(32, 7));
const binding = (over: Partial<CursorBinding> = {}): CursorBinding => ({
  list: '["list_deliveries",{"webhook_id":"a"}]', tenant: 't-1', caller: 'isv:i-1', seal: (text) => box.digest('cursor', text), ...over,
});
const codec = listCursor('webhook_deliveries', ['uuid']);
const KEY = ['4f6c1f1e-8a0e-4a53-9a51-0d8e6f0b6c11'];

describe('a list cursor', () => {
  it('reads back under the binding it was issued in', () => {
    const cursor = withCursorBinding(binding(), () => codec.encode(KEY));
    expect(withCursorBinding(binding(), () => codec.decode(cursor))).toEqual(KEY);
  });

  it.each<[string, Partial<CursorBinding>]>([
    ['another path of the same operation', { list: '["list_deliveries",{"webhook_id":"b"}]' }],
    ['another tenant', { tenant: 't-2' }],
    ['another caller', { caller: 'msp:t-1' }],
    ['another server secret', { seal: (text) => new SecretBox(Buffer.alloc(32, 8)).digest('cursor', text) }],
  ])('is refused under %s', (_what, over) => {
    const cursor = withCursorBinding(binding(), () => codec.encode(KEY));
    expect(withCursorBinding(binding(over), () => codec.decode(cursor))).toBeNull();
  });

  it('is refused without its seal inside a binding; outside one only its shape is read', () => {
    const unsealed = codec.encode(KEY);
    expect(codec.decode(unsealed)).toEqual(KEY);
    expect(withCursorBinding(binding(), () => codec.decode(unsealed))).toBeNull();
    expect(codec.decode(withCursorBinding(binding(), () => codec.encode(KEY)))).toEqual(KEY);
  });

  it('refuses a seal of another length in bytes than in characters', () => {
    const cursor = Buffer.from(JSON.stringify(['webhook_deliveries', KEY[0], 'é'.repeat(22)])).toString('base64url');
    expect(withCursorBinding(binding(), () => codec.decode(cursor))).toBeNull();
  });

  it('refuses a time outside the years it takes', () => {
    const times = listCursor('tenants', ['time', 'uuid']);
    const cursor = (t: string) => Buffer.from(JSON.stringify(['tenants', t, KEY[0]])).toString('base64url');
    expect(times.decode(cursor('2026-11-22T10:00:00.000Z'))).toEqual(['2026-11-22T10:00:00.000Z', KEY[0]]);
    expect(times.decode(cursor('0000-01-01T00:00:00Z'))).toBeNull();
    expect(times.decode(cursor('+275760-09-13T00:00:00.000Z'))).toBeNull();
  });
});
