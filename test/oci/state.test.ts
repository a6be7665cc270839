// The OCI container state, read in one place for the hook (stdin) and the shim's exec (the
// runtime's `state ID` output): a typed state, or one line naming the input and what is wrong,
// never a byte of the input.
import t from 'tap';
import { EnvhookError } from '../../src/errors.ts';
import { bundleFromStateOutput, parseState } from '../../src/oci/state.ts';

const CANARY = 'CANARY-state-51c2';
const WHERE = 'container state on stdin';
const COMMAND = '/usr/sbin/runc state "c1"';

// What runc 1.1.5 printed for `runc --root R state probe-c1` (MarshalIndent, two spaces, no final
// newline): the fields of the OCI state plus runc's own rootfs, created and owner.
const RUNC_STATE = `{
  "ociVersion": "1.0.2-dev",
  "id": "probe-c1",
  "pid": 22282,
  "status": "running",
  "bundle": "/run/containerd/io.containerd.runtime.v2.task/k8s.io/probe-c1",
  "rootfs": "/run/containerd/io.containerd.runtime.v2.task/k8s.io/probe-c1/rootfs",
  "created": "2026-11-27T15:16:37.749098884Z",
  "annotations": {
    "envhook.io/applied-env": "{\\"set\\":[\\"DB\\"],\\"removed\\":[]}",
    "io.kubernetes.cri.container-name": "app"
  },
  "owner": ""
}`;

t.test("runc's state output: every field the schema knows, typed", async (t) => {
  t.strictSame(parseState(RUNC_STATE, WHERE), {
    ociVersion: '1.0.2-dev',
    id: 'probe-c1',
    pid: 22282,
    status: 'running',
    bundle: '/run/containerd/io.containerd.runtime.v2.task/k8s.io/probe-c1',
    rootfs: '/run/containerd/io.containerd.runtime.v2.task/k8s.io/probe-c1/rootfs',
    created: '2026-11-27T15:16:37.749098884Z',
    annotations: { 'envhook.io/applied-env': '{"set":["DB"],"removed":[]}', 'io.kubernetes.cri.container-name': 'app' },
    owner: '',
  });
  t.equal(bundleFromStateOutput(RUNC_STATE, COMMAND), '/run/containerd/io.containerd.runtime.v2.task/k8s.io/probe-c1');
  // a hook's stdin as crun and Podman write it: compact, a bundle and nothing else required
  t.strictSame(parseState('{"bundle":"/b"}\n', WHERE), { bundle: '/b' });
  t.equal(bundleFromStateOutput('{"bundle":"/b"}', COMMAND), '/b');
});

// [name, text, the hook's line, the shim's line]
const BAD: [string, string, string, string][] = [
  ['empty', '', `${WHERE} is not valid JSON (empty)`, `${COMMAND}: no "bundle" in its output`],
  ['not JSON', `{"bundle": ${CANARY}}`, `${WHERE} is not valid JSON`, `${COMMAND}: no "bundle" in its output`],
  ['cut short', `{"id":"c1","bundle":"/b${CANARY}`, `${WHERE} is not valid JSON (at offset 40)`, `${COMMAND}: no "bundle" in its output`],
  ['not an object', `["${CANARY}"]`, `${WHERE}: /: must be object`, `${COMMAND}: no "bundle" in its output`],
  ['null', 'null', `${WHERE}: /: must be object`, `${COMMAND}: no "bundle" in its output`],
  [
    'no bundle',
    `{"id":"c1","annotations":{"a":"${CANARY}"}}`,
    `${WHERE}: /: missing field "bundle"`,
    `${COMMAND}: no "bundle" in its output`,
  ],
  [
    'an empty bundle',
    '{"id":"c1","bundle":""}',
    `${WHERE}: /bundle: must NOT have fewer than 1 characters`,
    `${COMMAND}: no "bundle" in its output`,
  ],
  ['a bundle not a string', '{"bundle":7}', `${WHERE}: /bundle: must be string`, `${COMMAND}: no "bundle" in its output`],
  [
    'an empty id',
    '{"id":"","bundle":"/b"}',
    `${WHERE}: /id: must NOT have fewer than 1 characters`,
    `${COMMAND}: /id: must NOT have fewer than 1 characters`,
  ],
  ['a pid not an integer', `{"pid":"${CANARY}","bundle":"/b"}`, `${WHERE}: /pid: must be integer`, `${COMMAND}: /pid: must be integer`],
  ['a pid of 1.5', '{"pid":1.5,"bundle":"/b"}', `${WHERE}: /pid: must be integer`, `${COMMAND}: /pid: must be integer`],
  ['a status not a string', '{"status":1,"bundle":"/b"}', `${WHERE}: /status: must be string`, `${COMMAND}: /status: must be string`],
  [
    'an annotation not a string',
    '{"bundle":"/b","annotations":{"io.example/key":1}}',
    `${WHERE}: /annotations/io.example~1key: must be string`,
    `${COMMAND}: /annotations/io.example~1key: must be string`,
  ],
  [
    'annotations not an object',
    '{"bundle":"/b","annotations":[]}',
    `${WHERE}: /annotations: must be object`,
    `${COMMAND}: /annotations: must be object`,
  ],
  [
    'nested 10,000 levels',
    `{"bundle":"/b","x":${'['.repeat(10_000)}${']'.repeat(10_000)}}`,
    `${WHERE} nests deeper than 512 levels`,
    `${COMMAND}: no "bundle" in its output`,
  ],
];

/** The one line a refusal says (an EnvhookError's message); a read that does not throw fails. */
function refusal(read: () => unknown): string {
  try {
    read();
  } catch (err) {
    if (err instanceof EnvhookError) return err.message;
    throw err;
  }
  throw new Error('not refused');
}

t.test('a bad state: one exact line naming the input and the field, never a value', async (t) => {
  for (const [name, text, hookLine, shimLine] of BAD) {
    const hook = refusal(() => parseState(text, WHERE));
    t.equal(hook, hookLine, `${name}: the hook's line`);
    const shim = refusal(() => bundleFromStateOutput(text, COMMAND));
    t.equal(shim, shimLine, `${name}: the shim's line`);
    t.notMatch(hook + shim, CANARY, `${name}: no value`);
  }
});
