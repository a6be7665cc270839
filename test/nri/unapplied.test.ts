// A missed container's status entry and whether it still runs: its pid in /proc, with the start
// time recorded when it was listed.
import t from 'tap';
import { boundUnapplied, stillRuns, unappliedEntry } from '../../src/nri/unapplied.ts';
import { procStat } from '../../src/nri/proc-stat.ts';
import { MAX_UNAPPLIED } from '../../src/nri/status-file.ts';

const missed = { id: 'c1', name: 'app', pod: 'web', namespace: 'shop', podUid: 'u', podEvicts: false };

t.test('the entry: names, id, pid and its start time; never the pod uid or anything else', async (t) => {
  t.same(unappliedEntry({ ...missed, pid: process.pid }), {
    id: 'c1',
    container: 'app',
    pod: 'web',
    namespace: 'shop',
    pid: process.pid,
    pidStartTicks: procStat(process.pid)!.startTicks,
  });
  t.same(unappliedEntry(missed), { id: 'c1', container: 'app', pod: 'web', namespace: 'shop' }, 'no pid: none');
  t.same(unappliedEntry({ ...missed, pid: 4194304 }).pidStartTicks, undefined, 'a pid not in /proc: no start time');
});

t.test('still runs: this process yes; a pid gone, or another start time, no; no pid: nothing says it ended', async (t) => {
  const me = unappliedEntry({ ...missed, pid: process.pid });
  t.equal(stillRuns(me), true);
  t.equal(stillRuns({ ...me, pidStartTicks: me.pidStartTicks! + 1 }), false);
  t.equal(stillRuns({ ...me, pid: 4194304 }), false);
  t.equal(stillRuns(unappliedEntry(missed)), true);
});

t.test('bounded: the newest MAX_UNAPPLIED kept', async (t) => {
  const list = Array.from({ length: MAX_UNAPPLIED + 5 }, (_, i) => ({ id: `c${i}`, container: 'a', pod: 'p', namespace: 'n' }));
  const kept = boundUnapplied(list);
  t.equal(kept.length, MAX_UNAPPLIED);
  t.equal(kept[0]!.id, 'c5');
});
