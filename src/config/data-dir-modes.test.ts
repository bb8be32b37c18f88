/** The encryption key kept under DATA_DIR is readable by the service's user only. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from './config';

describe('DATA_DIR and the generated encryption key', () => {
  let dir: string;
  beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'msp-cfg-')); });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('creates DATA_DIR 0700 and the key 0600, and reuses the key', () => {
    const dataDir = path.join(dir, 'data');
    const first = loadConfig({ DATA_DIR: dataDir });
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(dataDir, 'encryption.key')).mode & 0o777).toBe(0o600);
    expect(loadConfig({ DATA_DIR: dataDir }).encryptionKey.equals(first.encryptionKey)).toBe(true);
  });

  it('tightens a key file and DATA_DIR left open to others', () => {
    fs.chmodSync(dir, 0o777);
    const file = path.join(dir, 'encryption.key');
    const key = Buffer.alloc(32, 9);
    fs.writeFileSync(file, key.toString('base64'));
    fs.chmodSync(file, 0o666);
    expect(loadConfig({ DATA_DIR: dir }).encryptionKey.equals(key)).toBe(true);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
  });
});
