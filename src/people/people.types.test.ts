/** What is kept of a person's typed email and name: nothing PostgreSQL would refuse (docs/architecture.md, People). */
import { personName, plausibleEmail } from './people.types';

it('an email with a control character is not plausible; a name keeps no control character', () => {
  expect(plausibleEmail('pat@msp.example')).toBe(true);
  for (const bad of ['pat\u0000@msp.example', 'pat@msp\u0007.example', 'pat@msp.exam\u007fple', 'pat@msp', 'p at@msp.example', `${'a'.repeat(250)}@m.example`]) {
    expect([bad, plausibleEmail(bad)]).toEqual([bad, false]);
  }
  expect(personName('  Pat\u0000 O\u001fwner\n ')).toBe('Pat Owner');
  expect(personName('x'.repeat(500))).toHaveLength(200);
  expect(personName('Zoë \uD83D\uDE00')).toBe('Zoë \uD83D\uDE00');
});
