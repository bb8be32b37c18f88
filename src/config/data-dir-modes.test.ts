/**
 * DATA_DIR is the service user's only, and the generated encryption key lives outside it (key-store.ts):
 * a copy of DATA_DIR does not carry the key to its credentials, a restart on the same DATA_DIR reads it
 * again, and a key an earlier version kept in DATA_DIR/encryption.key is moved out once.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from './config';
import { encryptionKeyPath } from './key-store';

describe('DATA_DIR and the generated encryption key', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'msp-cfg-'));
    env = { XDG_CONFIG_HOME: path.join(dir, 'config') };
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('creates DATA_DIR 0700 and the key 0600 outside it, and reuses the key', () => {
    const dataDir = path.join(dir, 'data');
    const first = loadConfig({ ...env, DATA_DIR: dataDir });
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(fs.readdirSync(dataDir)).toEqual([]);
    const file = encryptionKeyPath(dataDir, env);
    expect(file.startsWith(path.join(dir, 'config') + path.sep)).toBe(true);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(first.startupNotices.join(' ')).toContain(file);
    const again = loadConfig({ ...env, DATA_DIR: dataDir });
    expect(again.encryptionKey.equals(first.encryptionKey)).toBe(true);
    expect(again.startupNotices).toEqual([]);
  });

  it('a copy of DATA_DIR elsewhere does not carry the key', () => {
    const dataDir = path.join(dir, 'data');
    const original = loadConfig({ ...env, DATA_DIR: dataDir });
    const copy = path.join(dir, 'copy');
    fs.cpSync(dataDir, copy, { recursive: true });
    expect(loadConfig({ ...env, DATA_DIR: copy }).encryptionKey.equals(original.encryptionKey)).toBe(false);
  });

  it('moves a DATA_DIR/encryption.key out once, says so, and tightens DATA_DIR', () => {
    fs.chmodSync(dir, 0o777);
    const legacy = path.join(dir, 'encryption.key');
    const key = Buffer.alloc(32, 9);
    fs.writeFileSync(legacy, key.toString('base64'));
    fs.chmodSync(legacy, 0o666);
    const moved = loadConfig({ ...env, DATA_DIR: dir });
    expect(moved.encryptionKey.equals(key)).toBe(true);
    expect(fs.existsSync(legacy)).toBe(false);
    expect(moved.startupNotices).toEqual([expect.stringMatching(/moved the encryption key out of DATA_DIR/)]);
    const file = encryptionKeyPath(dir, env);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    // The next start reads it from its new place, silently.
    const next = loadConfig({ ...env, DATA_DIR: dir });
    expect(next.encryptionKey.equals(key)).toBe(true);
    expect(next.startupNotices).toEqual([]);
  });

  it('refuses to start when DATA_DIR/encryption.key and the stored key differ', () => {
    loadConfig({ ...env, DATA_DIR: dir });
    fs.writeFileSync(path.join(dir, 'encryption.key'), Buffer.alloc(32, 7).toString('base64'));
    expect(() => loadConfig({ ...env, DATA_DIR: dir })).toThrow(ConfigError);
    expect(fs.existsSync(path.join(dir, 'encryption.key'))).toBe(true);
  });
});
