// The capability hint of an EPERM or EACCES: the effective set read from /proc/<pid>/status as
// the kernel writes it, the missing capabilities named, nothing added where none is missing, for
// another error, or for a process that is not root. The hint on a real refusal of the kernel is
// checked end to end in test/e2e/nri-capabilities.test.ts.
import t from 'tap';
import fs from 'node:fs';
import { capabilityHint, effectiveSet, lacking } from '../../src/fs/capabilities.ts';

/** /proc/<pid>/status lines around CapEff, as Linux 6.x prints them. */
const status = (eff: string) =>
  `Name:\tnode\nUid:\t0\t0\t0\t0\nCapInh:\t0000000000000000\nCapPrm:\t${eff}\nCapEff:\t${eff}\nCapBnd:\t${eff}\n`;
const eperm = Object.assign(new Error('EPERM: operation not permitted, fchmod'), { code: 'EPERM' });
const eacces = Object.assign(new Error('EACCES: permission denied, open'), { code: 'EACCES' });

t.test('effectiveSet reads CapEff', async (t) => {
  t.equal(effectiveSet(status('000001ffffffffff')), 0x1ffffffffffn, 'every capability of a privileged root');
  t.equal(effectiveSet(status('000000000000000b')), 0xbn, 'CHOWN, DAC_OVERRIDE, FOWNER');
  t.equal(effectiveSet('Name:\tnode\n'), undefined, 'no CapEff line');
  t.equal(effectiveSet(fs.readFileSync('/proc/self/status', 'utf8'))! & 1n, 1n, 'this test, as root, has CAP_CHOWN');
});

t.test('lacking: the needed capabilities not in the set', async (t) => {
  t.same(lacking(['CHOWN', 'FOWNER'], 0xbn), []);
  t.same(lacking(['CHOWN', 'FOWNER'], 0x1n), ['FOWNER'], 'CHOWN only');
  t.same(lacking(['CHOWN', 'DAC_OVERRIDE', 'FOWNER'], 0n), ['CHOWN', 'DAC_OVERRIDE', 'FOWNER']);
  t.same(lacking(['DAC_OVERRIDE'], 0x4n), ['DAC_OVERRIDE'], 'DAC_READ_SEARCH is another bit');
});

const asRoot = { skip: process.geteuid?.() !== 0 && 'the hint is for root: tests run as root' };
t.test('capabilityHint: an EPERM or EACCES of root without a needed capability names it and what to do', asRoot, async (t) => {
  t.equal(
    capabilityHint(eperm, ['CHOWN', 'FOWNER'], () => status('0000000000000003')),
    ": envhook runs without CAP_FOWNER: add FOWNER to its container's capabilities (docs/privileges.md)",
  );
  t.equal(
    capabilityHint(eperm, ['CHOWN', 'FOWNER'], () => status('0000000000000000')),
    ": envhook runs without CAP_CHOWN and CAP_FOWNER: add CHOWN, FOWNER to its container's capabilities (docs/privileges.md)",
  );
  t.equal(
    capabilityHint(eacces, ['DAC_OVERRIDE'], () => status('000000000000000d')),
    ": envhook runs without CAP_DAC_OVERRIDE: add DAC_OVERRIDE to its container's capabilities (docs/privileges.md)",
    'DAC_READ_SEARCH alone is not what envhook asks for',
  );
  t.equal(
    capabilityHint(eperm, ['CHOWN', 'FOWNER'], () => status('000001ffffffffff')),
    '',
    'every capability: a policy, not envhook',
  );
  t.equal(
    capabilityHint(eperm, ['CHOWN'], () => ''),
    '',
    'no status to read: nothing claimed',
  );
  const enoent = Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
  t.equal(
    capabilityHint(enoent, ['CHOWN'], () => status('0000000000000000')),
    '',
    'another error',
  );
  t.equal(
    capabilityHint(new Error('no code'), ['CHOWN'], () => status('0000000000000000')),
    '',
  );
});

t.test('capabilityHint as another user: nothing (errors.ts says run as root)', async (t) => {
  const geteuid = process.geteuid;
  process.geteuid = () => 1000;
  t.teardown(() => void (process.geteuid = geteuid));
  t.equal(
    capabilityHint(eperm, ['CHOWN'], () => status('0000000000000000')),
    '',
  );
});
