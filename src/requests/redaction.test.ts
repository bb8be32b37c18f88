import { BODY_LIMIT, KnownSecrets, REDACTED, keptBody, keptHeaders, keptQuery } from './redaction';

const KEY = 'sk_live_Q2xvdWRzIGFuZCBzdW5zaGluZSE1234';
const WHSEC = 'whsec_c2VjcmV0LXNpZ25pbmcta2V5LWJ5dGVzMTIzNA==';

describe('what the request log keeps', () => {
  it('replaces secret-named fields whole, and the same values wherever else they appear', () => {
    const known = new KnownSecrets();
    const request = keptBody({ parsed: { connector: 'connectwise', credentials: { publicKey: 'pub-abcdef', privateKey: 'priv-123456' }, note: 'my key is priv-123456' } }, known);
    expect(request.text).not.toContain('priv-123456');
    expect(request.text).not.toContain('pub-abcdef');
    expect(JSON.parse(request.text!)).toEqual({ connector: 'connectwise', credentials: REDACTED, note: `my key is ${REDACTED}` });
  });

  it('learns a secret minted in the answer and scrubs it from the other body', () => {
    const known = new KnownSecrets();
    const answer = keptBody({ raw: JSON.stringify({ id: 'w1', url: 'https://h.example/x', secret: 'Zm9vYmFyYmF6cXV4' }), complete: true }, known);
    expect(JSON.parse(answer.text!)).toMatchObject({ id: 'w1', secret: REDACTED });
    expect(known.scrub('echo Zm9vYmFyYmF6cXV4 back')).toBe(`echo ${REDACTED} back`);
  });

  it('replaces secret-shaped text without a name: API keys, webhook secrets, bearer tokens, one-time links', () => {
    const known = new KnownSecrets();
    const raw = JSON.stringify({ message: `key ${KEY} and ${WHSEC}`, connect_url: 'https://svc.example/connect/AbCdEfGhIjKlMnOpQrStUvWxYz012345', hint: 'Authorization: Bearer abc.def.ghijkl' });
    const text = keptBody({ raw, complete: true }, known).text!;
    for (const s of [KEY, WHSEC, 'AbCdEfGhIjKlMnOpQrStUvWxYz012345', 'abc.def.ghijkl']) expect(text).not.toContain(s);
    expect(text).toContain('/connect/[redacted]');
  });

  it('keeps the words of the interface that share a secret\'s name: a grant key, an error code', () => {
    const known = new KnownSecrets();
    const text = keptBody({ raw: JSON.stringify({ code: 'grant_missing', needed: { key: 'psa.ticket.create' } }), complete: true }, known).text!;
    expect(JSON.parse(text)).toEqual({ code: 'grant_missing', needed: { key: 'psa.ticket.create' } });
  });

  it('redacts a body cut on capture as text, a secret cut open at the end included, then cuts it at the limit', () => {
    const known = new KnownSecrets();
    const raw = `{"items":["${'x'.repeat(BODY_LIMIT)}"],"secret":"half-of-a-sec`;
    const kept = keptBody({ raw, complete: false }, known);
    expect(kept.truncated).toBe(true);
    expect(Buffer.byteLength(kept.text!)).toBeLessThanOrEqual(BODY_LIMIT);
    expect(keptBody({ raw: '{"a":1,"client_secret":"abcdefgh', complete: false }, known).text).toBe(`{"a":1,"client_secret":"${REDACTED}`);
    // Cut inside an escape: the value is still taken out, and the fields between are kept as they were.
    expect(keptBody({ raw: '{"password":"ab\\"cd","name":"Contoso \\"Ltd\\"","token":"zz\\', complete: false }, known).text)
      .toBe(`{"password":"${REDACTED}","name":"Contoso \\"Ltd\\"","token":"${REDACTED}`);
  });

  it('takes out a known secret cut in two at the end of a cut body', () => {
    const known = new KnownSecrets();
    known.add(KEY);
    const raw = `{"note":"${'y'.repeat(100)} ${KEY.slice(0, 14)}`;
    const kept = keptBody({ raw, complete: false }, known);
    expect(kept.text).not.toContain(KEY.slice(0, 14));
    expect(kept.text!.endsWith(REDACTED)).toBe(true);
    expect(keptBody({ raw: '{"note":"sk_li', complete: false }, new KnownSecrets()).text).toBe(`{"note":"${REDACTED}`);
  });

  it('cuts a long body at 64 KiB and says so', () => {
    const kept = keptBody({ parsed: { text: 'é'.repeat(BODY_LIMIT) } }, new KnownSecrets());
    expect(kept.truncated).toBe(true);
    expect(Buffer.byteLength(kept.text!)).toBeLessThanOrEqual(BODY_LIMIT);
    expect(kept.text).not.toContain('\ufffd');
  });

  it('replaces the secret headers and query parameters, and known secrets in any other', () => {
    const known = new KnownSecrets();
    known.add(KEY);
    const headers = keptHeaders({ 'X-API-Key': KEY, authorization: 'Bearer abcdefghijkl', cookie: 'sid=1', 'content-type': 'application/json', 'x-note': `sent ${KEY}` }, known);
    expect(headers).toEqual([
      { name: 'authorization', value: REDACTED }, { name: 'content-type', value: 'application/json' }, { name: 'cookie', value: REDACTED },
      { name: 'x-api-key', value: REDACTED }, { name: 'x-note', value: `sent ${REDACTED}` },
    ]);
    expect(keptQuery('limit=5&access_token=abcdef123&status=4xx', known)).toBe('limit=5&access_token=%5Bredacted%5D&status=4xx');
  });
});
