// The private CRI config as each containerd reads it (its own `config dump`): every socket,
// directory and the runc root are under the temporary directory, none of the host's; NRI is
// off unless asked for, and then on its own socket.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { parse } from 'smol-toml';
import { criConfig, criPaths, type ContainerdVersion } from './config.ts';
import { missingForCri, SUITE_OF } from './containerd.ts';
import { debianPackages } from '../../../scripts/debian-sid.mjs';
import { CONTAINERD } from '../bundle.ts';

const bin = (v: ContainerdVersion) =>
  v === '1.6' ? CONTAINERD! : path.join(debianPackages(SUITE_OF[v], ['containerd']).containerd, 'usr/bin/containerd');

function dump(t: Test, v: ContainerdVersion, nri = false): Record<string, any> {
  const dir = t.testdir({});
  const file = criPaths(dir).config;
  fs.writeFileSync(file, criConfig({ version: v, dir, runc: '/usr/sbin/runc', sandboxImage: 'docker.io/envhook/pause:test', nri }));
  const r = spawnSync(bin(v), ['--config', file, 'config', 'dump'], { encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr);
  const out = parse(r.stdout) as Record<string, any>;
  t.equal(out.root, path.join(dir, 'root'));
  t.equal(out.state, path.join(dir, 'state'));
  t.equal(out.grpc.address, path.join(dir, 'sock'));
  t.equal(out.ttrpc.address, path.join(dir, 'sock.ttrpc'));
  t.equal(out.plugins['io.containerd.internal.v1.opt'].path, path.join(dir, 'opt'));
  return out;
}

for (const v of ['1.6', '1.7', '2.1'] as const) {
  t.test(`containerd ${v} reads the config: everything private`, { skip: missingForCri(v) }, async (t) => {
    const out = dump(t, v);
    const dir = path.dirname(out.root);
    const rt = v !== '2.1' ? out.plugins['io.containerd.grpc.v1.cri'].containerd : out.plugins['io.containerd.cri.v1.runtime'].containerd;
    t.same(rt.runtimes.runc.options.Root, path.join(dir, 'runc'), 'runc root of our own');
    t.equal(rt.default_runtime_name, 'runc');
    const cni = v !== '2.1' ? out.plugins['io.containerd.grpc.v1.cri'].cni : out.plugins['io.containerd.cri.v1.runtime'].cni;
    t.equal(cni.conf_dir, path.join(dir, 'cni/conf'), "not the host's /etc/cni/net.d");
    if (v !== '1.6') t.equal(out.plugins['io.containerd.nri.v1.nri'].disable, true, 'NRI off unless asked for (never the host socket)');
    if (v === '2.1') {
      t.equal(out.plugins['io.containerd.cri.v1.images'].pinned_images.sandbox, 'docker.io/envhook/pause:test');
    } else {
      t.equal(out.plugins['io.containerd.grpc.v1.cri'].sandbox_image, 'docker.io/envhook/pause:test');
    }
  });
}

for (const v of ['1.7', '2.1'] as const) {
  t.test(`NRI on ${v}: its own socket and plugin directories`, { skip: missingForCri(v) }, async (t) => {
    const out = dump(t, v, true);
    const dir = path.dirname(out.root);
    const nri = out.plugins['io.containerd.nri.v1.nri'];
    t.equal(nri.disable, false);
    t.equal(nri.socket_path, path.join(dir, 'nri.sock'));
    t.equal(nri.plugin_path, path.join(dir, 'nri/plugins'));
    t.equal(nri.plugin_config_path, path.join(dir, 'nri/conf.d'));
    t.equal(nri.plugin_registration_timeout, '30s', "past NRI's 5 s: a pre-installed plugin's starts on a loaded test machine");
  });
}

t.test('NRI is refused for 1.6 (it came with 1.7)', async (t) => {
  t.throws(() => criConfig({ version: '1.6', dir: '/tmp/x', runc: 'runc', sandboxImage: 'p', nri: true }), /no NRI/);
});

t.test('extra config: another runtime handler next to runc', { skip: missingForCri('1.6') }, async (t) => {
  const dir = t.testdir({});
  const extra = ['[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.other]', '  runtime_type = "io.containerd.runc.v2"'].join('\n');
  fs.writeFileSync(criPaths(dir).config, criConfig({ version: '1.6', dir, runc: '/usr/sbin/runc', sandboxImage: 'p', extra }));
  const r = spawnSync(CONTAINERD!, ['--config', criPaths(dir).config, 'config', 'dump'], { encoding: 'utf8' });
  const runtimes = (parse(r.stdout) as Record<string, any>).plugins['io.containerd.grpc.v1.cri'].containerd.runtimes;
  t.same(Object.keys(runtimes).sort(), ['other', 'runc']);
});
