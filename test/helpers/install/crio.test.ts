// The crio double as the tests run it (crio.ts's wrapper): for a configuration file it cannot
// decode it prints what CRI-O prints, one logrus line on stderr and nothing on stdout, and exits 1
// as CRI-O's logrus.Fatal does; the error chain of the version it plays (bare before 1.31,
// wrapped from 1.31), for the main file (--config) and for a drop-in (--config-dir).
import t from 'tap';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { crioDouble } from './crio.ts';

const run = (bin: string, args: string[]) => spawnSync(bin, args, { encoding: 'utf8' });
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
/** logrus's text line for a fatal error: its time, level and quoted message. */
const fatal = (time: RegExp, msg: string) => new RegExp(`^time="${time.source}" level=fatal msg=${escape(JSON.stringify(msg))}\\n$`);
const RFC3339 = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/;

t.test('a file CRI-O cannot decode: its error line on stderr, exit 1, nothing on stdout', async (t) => {
  const dir = t.testdir({
    bin: {},
    'crio.conf': '[crio\n',
    'crio.conf.d': { '10-ok.conf': '[crio.runtime]\n', '20-bad.conf': '[crio.runtime]\nhooks_dir = [\n' },
  });
  const main = path.join(dir, 'crio.conf');
  const dropIn = path.join(dir, 'crio.conf.d/20-bad.conf');
  const cases: [string, string[], RegExp, string][] = [
    ['1.30.0', ['--config', main, 'config'], RFC3339, `unable to decode configuration ${main}: toml: line 1: illegal character in key`],
    [
      '1.30.0',
      ['--config-dir', path.join(dir, 'crio.conf.d'), 'config'],
      RFC3339,
      `unable to decode configuration ${dropIn}: toml: line 3: invalid value`,
    ],
    [
      '1.31.0',
      ['--config', main, 'config'],
      /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{9}Z/,
      `get and merge config from context: update config from file: update config from drop-in file: unable to decode configuration ${main}: toml: line 1: illegal character in key`,
    ],
    [
      '1.36.3',
      ['--config-dir', path.join(dir, 'crio.conf.d'), 'config'],
      /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z/,
      `get and merge config from context: update config from path: walk path: unable to decode configuration ${dropIn}: toml: line 3: invalid value`,
    ],
  ];
  for (const [version, args, time, msg] of cases) {
    const r = run(crioDouble(path.join(dir, 'bin'), version).bin, args);
    t.equal(r.status, 1, `${version} ${args.join(' ')}: exit 1`);
    t.equal(r.stdout, '');
    t.match(r.stderr, fatal(time, msg));
  }
});

t.test('a file it can decode: the configuration on stdout, exit 0', async (t) => {
  const dir = t.testdir({ bin: {}, 'crio.conf.d': { '10-hooks.conf': '[crio.runtime]\nhooks_dir = ["/etc/hooks"]\n' } });
  const r = run(crioDouble(path.join(dir, 'bin')).bin, ['--config-dir', path.join(dir, 'crio.conf.d'), 'config']);
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stderr, '');
  t.match(r.stdout, /^hooks_dir = \[\n\t"\/etc\/hooks",\n\]$/m);
});
