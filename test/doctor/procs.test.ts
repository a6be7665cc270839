// Which processes under --root's /proc run `envhook <command>`, whatever runs envhook: the
// executable, the bundle's launcher or its main file under Node.
import t from 'tap';
import path from 'node:path';
import { envhookPids } from '../../src/doctor/procs.ts';

const cmdline = (...argv: string[]) => ({ cmdline: argv.join('\0') + '\0' });

t.test('the pids whose command line runs envhook with that command, and only those', async (t) => {
  const root = t.testdir({
    proc: {
      '10': cmdline('/usr/local/lib/envhook/envhook', 'watch'),
      '11': cmdline('/usr/bin/node', '/opt/envhook/envhook.cjs', 'watch', '--log-level', 'debug'),
      '12': cmdline('node', 'dist/envhook-main.cjs', 'watch'),
      '13': cmdline('/usr/local/lib/envhook/envhook', 'nri'),
      '14': cmdline('/usr/bin/watch', 'envhook'),
      '15': cmdline('/usr/bin/my-envhook', 'watch'),
      '16': {}, // exited meanwhile: no cmdline
      self: cmdline('/usr/local/lib/envhook/envhook', 'watch'),
    },
  });
  t.same(envhookPids(root, 'watch').sort(), [10, 11, 12]);
  t.same(envhookPids(root, 'nri'), [13]);
  t.same(envhookPids(root, 'status'), []);
});

t.test('no /proc under the root: none', async (t) => {
  t.same(envhookPids(path.join(t.testdir({}), 'nowhere'), 'watch'), []);
});
