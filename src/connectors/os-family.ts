/**
 * The canonical OS family (windows, mac, linux) from the words an RMM uses for a device's operating
 * system ("Microsoft Windows 11 Pro", "winnt", "macOS 14 Sonoma", "Mac OS X", "Ubuntu 22.04.4 LTS").
 * Connector-neutral: every RMM that names the OS in text asks it. `\bwin` so that "Darwin" is not Windows.
 */
export function osFamilyFromText(os: string | null | undefined): 'windows' | 'mac' | 'linux' | null {
  if (!os) return null;
  if (/\bwin/i.test(os)) return 'windows';
  if (/mac\s?os|os x|\bmac\b/i.test(os)) return 'mac';
  if (/linux|ubuntu|debian|centos|red hat|rhel|fedora|suse|rocky|alma/i.test(os)) return 'linux';
  return null;
}
