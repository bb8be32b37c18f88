/**
 * The drivers' own errors of a dependency that is gone are 503 service_unavailable with Retry-After;
 * anything else is left as it was. The errors come from the real drivers, pointed at a closed port.
 */
import IORedis from 'ioredis';
import { DataSource } from 'typeorm';
import { ServiceError } from '../errors/service-error';
import { freePort } from '../../test/support/runtime';
import { dependencyFailure } from './dependency-errors';

async function thrownBy(fn: () => Promise<unknown>): Promise<unknown> {
  try { await fn(); } catch (err) { return err; }
  throw new Error('expected a failure');
}

it('pg through TypeORM, nobody listening: 503', async () => {
  const ds = new DataSource({ type: 'postgres', host: '127.0.0.1', port: await freePort(), username: 'x', database: 'x' });
  const err = await thrownBy(() => ds.initialize());
  expect(dependencyFailure(err)).toMatchObject({ code: 'service_unavailable', status: 503, extras: { retryAfterSeconds: expect.any(Number) } });
});

it('ioredis, nobody listening: MaxRetriesPerRequestError is 503 naming the queue', async () => {
  const redis = new IORedis(await freePort(), '127.0.0.1', { maxRetriesPerRequest: 1, retryStrategy: () => 10 });
  redis.on('error', () => undefined);
  try {
    const err = await thrownBy(() => redis.ping());
    expect(dependencyFailure(err)).toMatchObject({ code: 'service_unavailable', extras: { details: { dependency: 'queue' } } });
  } finally {
    redis.disconnect();
  }
});

it('leaves a ServiceError, a programming error and a constraint violation as they are', () => {
  expect(dependencyFailure(new ServiceError('not_found', 'x'))).toBeNull();
  expect(dependencyFailure(new TypeError('x is undefined'))).toBeNull();
  expect(dependencyFailure(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBeNull();
});
