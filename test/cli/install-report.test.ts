// What install and uninstall say (src/cli/install-report.ts): the lines in their order, and the
// --json object with the same facts, every key present.
import t from 'tap';
import { makeLayout } from '../../src/install/layout.ts';
import { outcomeJson, outcomeText, type Outcome } from '../../src/cli/install-report.ts';

const outcome = (over: Partial<Outcome>): Outcome => ({
  command: 'uninstall',
  runtime: 'crio',
  mode: 'nri',
  root: '/host',
  dryRun: false,
  layout: makeLayout('crio', { root: '/host' }),
  changes: [],
  removedDirs: [],
  notes: [],
  checked: null,
  nothing: null,
  next: [],
  plugins: [],
  warnings: [],
  removedState: [],
  ...over,
});

const changes = [
  { file: '/etc/crio/crio.conf.d/50-envhook.conf', before: Buffer.from('a'), after: undefined, mode: 0o644 },
  { file: '/etc/crio/crio.conf', before: Buffer.from('x'), after: Buffer.from('xy'), mode: 0o644, backup: true, note: 'NRI enabled' },
];

t.test('lines: changes, directories, notes, the check, next, then the plugins and warnings', async (t) => {
  const text = outcomeText(
    outcome({
      changes,
      removedDirs: ['/usr/local/lib/envhook'],
      notes: ['a note'],
      checked: 'checked with crio config',
      next: ['systemctl restart crio'],
      plugins: [
        { socket: '/var/run/nri/nri.sock', pid: 42, state: 'stopped' },
        {
          socket: '/var/run/nri/nri.sock',
          pid: 43,
          state: 'running-previous-files',
          why: 'it is of a version that cannot be upgraded in place',
        },
        { socket: '/var/run/nri/nri.sock', pid: 44, state: 'handed-over', to: 45 },
      ],
      removedState: ['/run/envhook/nri-status.json'],
      warnings: ['no answer'],
    }),
  );
  t.equal(
    text,
    [
      "paths below are the node's, under --root /host",
      'remove /etc/crio/crio.conf.d/50-envhook.conf',
      'update /etc/crio/crio.conf (original saved as /usr/local/lib/envhook/backup/etc/crio/crio.conf)',
      '  note: NRI enabled',
      'remove directory /usr/local/lib/envhook (install created it)',
      'note: a note',
      'checked with crio config',
      'next:\n  systemctl restart crio',
      'stopped the running envhook nri for /var/run/nri/nri.sock (pid 42)',
      'note: envhook nri (pid 43) is running for /var/run/nri/nri.sock from the files before this install (it is of a version that cannot be upgraded in place): ' +
        'it goes on until crio restarts (systemctl restart crio); the new one then takes over from it (docs/nri-guarantees.md, "An upgrade of the pre-installed plugin")',
      'upgraded without a restart of crio: envhook nri (pid 44) handed over to the one started from the new files (pid 45) on /var/run/nri/nri.sock, ' +
        'no container created without its env; it is registered as an external plugin until crio restarts and starts the new file itself',
      "remove /run/envhook/nri-status.json (the NRI plugin's run state)",
      'warning: no answer',
      '',
    ].join('\n'),
  );
  t.equal(outcomeText(outcome({ nothing: 'envhook is not installed for crio' })), 'nothing changed: envhook is not installed for crio\n');
  t.equal(outcomeText(outcome({})), '', 'nothing to say: no line');
});

t.test('--json: the same facts, every key present, no diff', async (t) => {
  const j = JSON.parse(outcomeJson(outcome({ changes, dryRun: true })));
  t.same(Object.keys(j), [
    'command',
    'runtime',
    'mode',
    'root',
    'prefix',
    'dryRun',
    'changed',
    'files',
    'removedDirectories',
    'notes',
    'checked',
    'nothing',
    'next',
    'plugins',
    'removedRunState',
    'warnings',
  ]);
  t.same(j.files, [
    { path: '/etc/crio/crio.conf.d/50-envhook.conf', action: 'remove', backup: null, bytes: null, sha256: null, note: null },
    {
      path: '/etc/crio/crio.conf',
      action: 'update',
      backup: '/usr/local/lib/envhook/backup/etc/crio/crio.conf',
      bytes: 2,
      sha256: '769a4e6d0003189c7e96c5d9b7e810a0d11c3a12832527ec94b0f86d277f51ca',
      note: 'NRI enabled',
    },
  ]);
  t.match(j, { dryRun: true, changed: true, prefix: '/usr/local/lib/envhook', mode: 'nri' });
  t.equal(JSON.parse(outcomeJson(outcome({ nothing: 'x' }))).changed, false);
  t.equal(
    outcomeText(outcome({ dryRun: true, removedState: ['/run/envhook/nri-owners'] })),
    "would remove /run/envhook/nri-owners (the NRI plugin's run state, once the plugin is stopped)\n",
  );
});
