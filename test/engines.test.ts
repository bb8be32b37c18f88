/**
 * The Node versions package.json states are ones every installed package admits: `npm ci` on a stated
 * version warns about no dependency, and the Docker image's Node is one of them.
 */
import fs from 'node:fs';
import path from 'node:path';
import semver from 'semver';

const root = path.join(__dirname, '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, unknown> };

/** Every package installed under node_modules (the lock's paths that exist here: optional ones for other platforms do not). */
function installed(): { name: string; version: string; node: string | undefined }[] {
  return Object.keys(lock.packages).filter((p) => p.startsWith('node_modules/'))
    .map((p) => path.join(root, p, 'package.json'))
    .filter((file) => fs.existsSync(file))
    .map((file) => {
      const m = JSON.parse(fs.readFileSync(file, 'utf8')) as { name: string; version: string; engines?: { node?: unknown } };
      return { name: m.name, version: m.version, node: typeof m.engines?.node === 'string' ? m.engines.node : undefined };
    });
}

describe('Node engines', () => {
  const stated = pkg.engines.node;

  it('states a valid range that this Node satisfies', () => {
    expect(semver.validRange(stated)).not.toBeNull();
    expect(semver.satisfies(process.versions.node, stated)).toBe(true);
  });

  it('admits no Node version that an installed package refuses', () => {
    const all = installed();
    expect(all.length).toBeGreaterThan(100);
    const refusing = all
      .filter((p) => p.node !== undefined && semver.validRange(p.node) !== null && !semver.subset(stated, p.node))
      .map((p) => `${p.name}@${p.version} wants node ${p.node}`);
    expect(refusing).toEqual([]);
  });

  it('builds the Docker image on a Node line package.json states', () => {
    const from = /^FROM node:(\d+)/m.exec(fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8'));
    expect(from).not.toBeNull();
    // The image tag names a major line; its current release is the line's newest, which the range must admit.
    expect(semver.intersects(stated, `^${from![1]}.0.0`)).toBe(true);
    expect(semver.satisfies(`${from![1]}.999.999`, stated)).toBe(true);
  });
});
