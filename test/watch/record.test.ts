// Owners records: written atomically by the shim's side, read back as untrusted input.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import {
  mergeRecords,
  podUidOfRecord,
  readOwnersRecord,
  recordVolume,
  watchVolumesOf,
  writeOwnersRecord,
  type OwnersRecord,
} from '../../src/watch/record.ts';
import { normalize } from '../../src/ownership/annotation.ts';

const UID = '6f1c2a9e-3b4d-4e5f-8a7b-0c1d2e3f4a5b';
const POD = `/var/lib/kubelet/pods/${UID}`;

function record(over: Partial<OwnersRecord> = {}): OwnersRecord {
  const [entry] = normalize([{ volume: 'keys', defaultUser: 1000, items: [{ path: './tls//server.key', user: 1001 }] }]);
  return {
    podUid: UID,
    podDir: POD,
    volumes: [
      recordVolume(entry!, `${POD}/volumes/kubernetes.io~secret/keys`, {
        kind: 'userns',
        mappings: [{ containerID: 0, hostID: 100000, size: 65536 }],
      }),
    ],
    ...over,
  };
}

t.test('written 0600 in a 0700 directory, atomically; read back the same', async (t) => {
  const runDir = path.join(t.testdir({}), 'run/envhook');
  const file = writeOwnersRecord(runDir, record());
  t.equal(file, path.join(runDir, 'owners', `${UID}.json`));
  t.equal(fs.statSync(runDir).mode & 0o777, 0o700);
  t.equal(fs.statSync(path.dirname(file)).mode & 0o777, 0o700);
  t.equal(fs.statSync(file).mode & 0o777, 0o600);
  t.same(JSON.parse(fs.readFileSync(file, 'utf8')), {
    version: 1,
    podUid: UID,
    podDir: POD,
    volumes: [
      {
        volume: 'keys',
        dir: `${POD}/volumes/kubernetes.io~secret/keys`,
        defaultUser: 1000,
        items: [{ path: './tls//server.key', user: 1001 }],
        uidMapping: { kind: 'userns', mappings: [{ containerID: 0, hostID: 100000, size: 65536 }] },
      },
    ],
  });
  t.same(readOwnersRecord(runDir, `${UID}.json`), record());
  const [v] = watchVolumesOf(readOwnersRecord(runDir, `${UID}.json`));
  t.same(
    v!.owners.items.map((i) => i.key),
    ['tls/server.key'],
  );
  writeOwnersRecord(runDir, record({ volumes: [] }));
  t.same(readOwnersRecord(runDir, `${UID}.json`).volumes, [], 'replaced');
  t.same(fs.readdirSync(path.dirname(file)), [`${UID}.json`], 'no temporary file left');
});

t.test('file names', async (t) => {
  t.equal(podUidOfRecord(`${UID}.json`), UID);
  for (const n of [`.${UID}.json.envhook-1-2`, 'x.json.tmp', '.json', '../x.json']) t.equal(podUidOfRecord(n), undefined, n);
});

t.test('refused: a shared run directory, a bad record, a path outside the kubelet layout', async (t) => {
  const dir = t.testdir({});
  const open = path.join(dir, 'open');
  fs.mkdirSync(open, { mode: 0o777 });
  fs.chmodSync(open, 0o777);
  t.throws(() => writeOwnersRecord(open, record()), {
    message: `run directory ${open} must be owned by root and not writable by group or others`,
  });
  t.notOk(fs.existsSync(path.join(open, 'owners')));
  fs.symlinkSync(dir, path.join(dir, 'link'));
  t.throws(() => writeOwnersRecord(path.join(dir, 'link'), record()), {
    message: `run directory ${path.join(dir, 'link')} is not a directory`,
  });
  const runDir = path.join(dir, 'run');
  t.throws(() => writeOwnersRecord(runDir, record({ podUid: '../x' })), {
    message: 'owners record of pod "../x": /podUid: not in the form allowed here',
  });
  t.throws(() => writeOwnersRecord(runDir, record({ podDir: '/var/lib/kubelet/pods/other' })), {
    message: /\/podDir: must be a normalised path ending in the pod UID$/,
  });
  const bad = record();
  bad.volumes[0]!.dir = '/etc';
  t.throws(() => writeOwnersRecord(runDir, bad), {
    message: /\/volumes\/0\/dir: must be <podDir>\/volumes\/kubernetes\.io~\{configmap,secret,projected,downward-api\}\/<volume>$/,
  });
  bad.volumes[0]!.dir = `${POD}/volumes/kubernetes.io~empty-dir/keys`;
  t.throws(() => writeOwnersRecord(runDir, bad), { message: /\/volumes\/0\/dir: must be/ });
  const owners = path.join(runDir, 'owners');
  fs.mkdirSync(owners, { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(owners, `${UID}.json`), '{"CANARY-secret": ');
  t.throws(() => readOwnersRecord(runDir, `${UID}.json`), { message: `owners record ${owners}/${UID}.json: not valid JSON` });
  fs.writeFileSync(path.join(owners, 'other.json'), JSON.stringify({ version: 1, ...record() }));
  t.throws(() => readOwnersRecord(runDir, 'other.json'), { message: /: \/podUid: does not match the file name$/ });
  fs.symlinkSync(path.join(owners, 'other.json'), path.join(owners, 'link.json'));
  t.throws(() => readOwnersRecord(runDir, 'link.json'), { message: /link\.json: is a symbolic link$/ });
  fs.writeFileSync(
    path.join(owners, 'dots.json'),
    JSON.stringify({
      version: 1,
      ...record({
        podUid: 'dots',
        podDir: '/p/dots',
        volumes: [
          {
            volume: 'k',
            dir: '/p/dots/volumes/kubernetes.io~secret/k',
            items: [{ path: '../../etc/shadow', user: 1 }],
            uidMapping: { kind: 'none' },
          },
        ],
      }),
    }),
  );
  t.throws(() => watchVolumesOf(readOwnersRecord(runDir, 'dots.json')), {
    message: `owners record of pod "dots": annotation "envhook.io/volumeOwners": /0/items/0/path: path must not contain '..'`,
  });
});

t.test("mergeRecords: a create's record over the pod's earlier ones", async (t) => {
  const v = record().volumes[0]!;
  const next = (copy: boolean) => record({ volumes: [{ ...v, ...(copy ? { copy: true } : {}), inPlace: false }] });
  const flags = (r: OwnersRecord) => r.volumes.map(({ copy, inPlace }) => ({ copy, inPlace }));
  t.same(flags(mergeRecords(undefined, next(true))), [{ copy: true, inPlace: false }], 'the first create: its own');
  t.same(
    flags(mergeRecords(record(), next(true))),
    [{ copy: true, inPlace: true }],
    "a record from before owned copies: its containers' files stay chowned in place",
  );
  t.same(
    flags(mergeRecords(next(false), next(true))),
    [{ copy: true, inPlace: false }],
    'an earlier container that did not mount it (an init container): not in place',
  );
  t.same(
    flags(mergeRecords(next(true), next(false))),
    [{ copy: true, inPlace: false }],
    'a later container without it: the copy stays followed',
  );
  t.same(
    flags(mergeRecords(record({ podDir: '/elsewhere' }), next(true))),
    [{ copy: true, inPlace: false }],
    'another pod directory: not merged',
  );
  const runDir = '/run/envhook';
  t.same(
    watchVolumesOf(mergeRecords(record(), next(true)), runDir).map((w) => w.copy?.volume ?? 'in place'),
    ['keys', 'in place'],
    'read back: copied, and chowned in place',
  );
  t.same(
    watchVolumesOf(next(false), runDir).map((w) => w.copy?.volume ?? 'in place'),
    ['in place'],
    'no copy: in place, as at its start',
  );
});
