/** Issue 12 part 9: a quiet start. At `info`, the sandbox's own calls to its simulators are not logged; headers never are. */
import { Writable } from 'node:stream';
import { createLogger } from '../src/shared/logger';
import { startTestService, type TestService } from './support/service';

function capture(): { lines: Array<Record<string, any>>; stream: Writable } {
  const lines: Array<Record<string, any>> = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, stream };
}

describe('request logs', () => {
  const info = capture();
  const debug = capture();
  let svc: TestService;
  let debugSvc: TestService;
  beforeAll(async () => {
    svc = await startTestService({}, { logger: createLogger('info', info.stream) });
    debugSvc = await startTestService({}, { logger: createLogger('debug', debug.stream) });
  });
  afterAll(async () => { await svc?.close(); await debugSvc?.close(); });

  // The test harness itself fetches /openapi.json from outside once it has started: that line belongs.
  const requestLines = (lines: Array<Record<string, any>>) => lines.filter((l) => l.req && l.req.path !== '/openapi.json');

  it('logs no request line at info while the sandbox starts and syncs from its simulators', () => {
    expect(requestLines(info.lines)).toEqual([]);
    expect(info.lines.filter((l) => l.req).map((l) => l.req.path)).toEqual(['/openapi.json']);
  });

  it('logs the sandbox\'s own simulator calls at debug, so they are there when asked for', () => {
    const internal = requestLines(debug.lines).filter((l) => String(l.req.path).startsWith('/sandbox-vendors/'));
    expect(internal.length).toBeGreaterThan(0);
    expect(internal.every((l) => l.level === 20)).toBe(true);
  });

  it('logs a request from outside at info, with method, path and status but no headers', async () => {
    const res = await svc.api(`/tenants/${svc.alphaId}/tickets?limit=1`, { headers: { authorization: 'Bearer should-not-appear' } });
    expect(res.status).toBe(200);
    const lines = requestLines(info.lines);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 30, req: { method: 'GET', path: `/tenants/${svc.alphaId}/tickets` }, res: { statusCode: 200 } });
    const text = JSON.stringify(info.lines);
    expect(text).not.toContain(svc.key);
    expect(text).not.toContain('should-not-appear');
    expect(text).not.toMatch(/"headers"/);
  });
});
