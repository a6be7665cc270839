import t from 'tap';
import { parseCreateArgs, parseRuncArgs } from '../../src/oci/runc-args.ts';
import { RUNC_ARGV_CASES } from './runc-args.cases.ts';

for (const c of RUNC_ARGV_CASES) {
  t.test(`runc ${JSON.stringify(c.argv)}`, async (t) => {
    const r = parseRuncArgs(c.argv);
    t.equal(r.subcommand, c.sub, 'subcommand');
    if (c.sub !== undefined) t.equal(c.argv[r.subcommandIndex], c.sub, 'index');
    else t.equal(r.subcommandIndex, -1);
    t.equal(r.globals.log, c.log, '--log');
    t.equal(r.globals['log-format'], c.logFormat, '--log-format');
    if (c.sub !== 'create' && c.sub !== 'run') return;
    const rest = c.argv.slice(r.subcommandIndex + 1);
    if (c.error) {
      t.throws(() => parseCreateArgs(c.sub as 'create', rest), { name: 'EnvhookError', message: c.error });
      return;
    }
    const a = parseCreateArgs(c.sub, rest);
    t.equal(a.help, c.help ?? false, 'help');
    if (c.help) return;
    t.equal(a.bundle, c.bundle, 'bundle');
    t.equal(a.id, c.id, 'id');
  });
}

t.test('global values are kept, last one wins', async (t) => {
  t.same(parseRuncArgs(['--root', '/a', '--root=/b', '--rootless', 'true', 'start', 'x']).globals, { root: '/b', rootless: 'true' });
});
