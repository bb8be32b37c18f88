import { osFamilyFromText } from './os-family';

describe('osFamilyFromText', () => {
  it.each([
    ['Microsoft Windows 11 Pro 10.0.22631', 'windows'],
    ['winnt Microsoft Windows Server 2022', 'windows'],
    ['macOS Sonoma 14.5', 'mac'],
    ['mac Mac OS X 10.15', 'mac'],
    ['Darwin 23.5.0 macOS', 'mac'],
    ['Ubuntu 22.04.4 LTS', 'linux'],
    ['Red Hat Enterprise Linux 9', 'linux'],
    ['FreeBSD 14', null],
    ['', null],
  ])('%s -> %s', (os, family) => { expect(osFamilyFromText(os)).toBe(family); });
});
