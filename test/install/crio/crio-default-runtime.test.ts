// `install --runtime crio` (the runtime handler) follows CRI-O's default runtime, as the
// containerd install copies its default runtime's options: the real runtime the front execs
// (envhook-runtime.conf) and the handler's runtime_root come from `default_runtime` and its
// handler table, read from `crio config` (the crio double, which prints what CRI-O prints) or,
// with no crio, from crio.conf and crio.conf.d. The built CLI, as the admin runs it; the lines
// checked are those the admin reads in the dry run.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { crioNodeRoot, install } from '../../helpers/install/install.ts';
import { crioDouble } from '../../helpers/install/crio.ts';
import { refused } from '../../helpers/refusal.ts';

const NO_CRIO = { PATH: '/nonexistent' };
const lines = (out: string) => out.split('\n');

t.test('default_runtime = "crun" in crio.conf, no crio to ask: the front runs crun, its state in /run/crun', async (t) => {
  const { root, source } = crioNodeRoot(t, { 'etc/crio/crio.conf': '[crio.runtime]\ndefault_runtime = "crun"\n' });
  const r = install({ runtime: 'crio', root, source, extra: ['--dry-run'], env: NO_CRIO });
  t.equal(r.status, 0, r.stderr);
  const out = lines(r.stdout);
  t.ok(out.includes('+runtime=crun'), 'envhook-runtime.conf: runtime=crun');
  t.notOk(out.includes('+runtime=runc'));
  t.ok(out.includes('+runtime_root = "/run/crun"'), 'the handler: runtime_root /run/crun');
  t.ok(out.includes('+# The envhook runtime handler: crun behind envhook-runtime (select it with RuntimeClass "envhook").'));
  t.ok(
    out.includes(
      `note: the front runs CRI-O's default runtime "crun" (default_runtime in /etc/crio/crio.conf): runtime crun, runtime_root /run/crun (--oci-runtime names another)`,
    ),
    r.stdout,
  );
});

t.test('crio config says it: CRI-O 1.36 (crun by default) and 1.30 (runc), nothing set in the files', async (t) => {
  for (const [version, name] of [
    ['1.36.3', 'crun'],
    ['1.30.0', 'runc'],
  ] as const) {
    const { root, source } = crioNodeRoot(t, {});
    const crio = crioDouble(path.dirname(root), version).bin;
    const r = install({ runtime: 'crio', root, source, extra: ['--dry-run', '--crio', crio], env: NO_CRIO });
    t.equal(r.status, 0, r.stderr);
    const out = lines(r.stdout);
    t.ok(out.includes(`+runtime=${name}`), `${version}: runtime=${name}`);
    t.ok(out.includes(`+runtime_root = "/run/${name}"`), `${version}: runtime_root`);
    t.ok(
      out.includes(
        `note: the front runs CRI-O's default runtime "${name}" (crio config): runtime ${name}, runtime_root /run/${name} (--oci-runtime names another)`,
      ),
      r.stdout,
    );
  }
});

t.test("the default handler's runtime_path and runtime_root, from a drop-in, are followed", async (t) => {
  const { root, source } = crioNodeRoot(t, {
    'etc/crio/crio.conf.d/10-crio.conf':
      '[crio.runtime]\ndefault_runtime = "k8s"\n\n[crio.runtime.runtimes.k8s]\nruntime_path = "/usr/libexec/crio/crun"\nruntime_type = "oci"\nruntime_root = "/run/k8s-crun"\n',
    'usr/libexec/crio/crun': '#!/bin/sh\n',
  });
  fs.chmodSync(path.join(root, 'usr/libexec/crio/crun'), 0o755);
  for (const extra of [[], ['--crio', crioDouble(path.dirname(root)).bin]]) {
    const r = install({ runtime: 'crio', root, source, extra: ['--dry-run', ...extra], env: NO_CRIO });
    t.equal(r.status, 0, r.stderr);
    const out = lines(r.stdout);
    t.ok(out.includes('+runtime=/usr/libexec/crio/crun'), 'the front execs the handler runtime_path');
    t.ok(out.includes('+runtime_root = "/run/k8s-crun"'), "the handler's runtime_root");
    const from = extra.length ? 'crio config' : 'default_runtime in /etc/crio/crio.conf.d/10-crio.conf';
    t.ok(
      out.includes(
        `note: the front runs CRI-O's default runtime "k8s" (${from}): runtime /usr/libexec/crio/crun, runtime_root /run/k8s-crun (--oci-runtime names another)`,
      ),
      r.stdout,
    );
  }
});

t.test('a default runtime that is not an OCI runtime (a VM runtime): refused, naming --oci-runtime; --oci-runtime then wins', async (t) => {
  const { root, source } = crioNodeRoot(t, {
    'etc/crio/crio.conf': '[crio.runtime]\ndefault_runtime = "kata"\n\n[crio.runtime.runtimes.kata]\nruntime_type = "vm"\n',
  });
  const r = install({ runtime: 'crio', root, source, extra: ['--dry-run'], env: NO_CRIO });
  refused(
    t,
    r,
    `envhook: CRI-O's default runtime "kata" (default_runtime in /etc/crio/crio.conf) has runtime_type "vm", which envhook's front cannot run in front of: name the OCI runtime it should run with --oci-runtime (e.g. --oci-runtime runc)\n`,
  );
  const ok = install({ runtime: 'crio', root, source, extra: ['--dry-run', '--oci-runtime', 'runc'], env: NO_CRIO });
  t.equal(ok.status, 0, ok.stderr);
  t.ok(lines(ok.stdout).includes('+runtime=runc'));
  t.ok(lines(ok.stdout).includes('+runtime_root = "/run/runc"'));
  t.notMatch(ok.stdout, /default runtime/, 'no word of the default runtime: --oci-runtime named it');
});
