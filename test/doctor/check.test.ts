// A check's line as doctor and status print it: state, name, what; a problem's remedy after a dash.
import t from 'tap';
import { checkLine, ok, problem, skipped } from '../../src/doctor/check.ts';

t.test('one line a state: ok, problem with and without its remedy, skipped with why', async (t) => {
  t.equal(checkLine(ok('front', '/p/envhook-runtime execs /usr/sbin/runc')), 'ok front: /p/envhook-runtime execs /usr/sbin/runc');
  t.equal(checkLine(problem('settings', 'bad file', 'fix it')), 'problem settings: bad file — fix it');
  t.equal(checkLine(problem('settings', 'bad file')), 'problem settings: bad file');
  t.same(problem('settings', 'bad file', ''), { check: 'settings', state: 'problem', what: 'bad file' }, 'no empty remedy');
  t.equal(checkLine(skipped('plugin', 'no NRI plugin installed')), 'skipped plugin: no NRI plugin installed');
});
