// The shipped examples and the Dockerfile stay true: the config examples are exactly what
// install writes, every manifest parses and its envhook.io/* values pass envhook's own schemas,
// and every path the Dockerfile and the DaemonSet name exists (or is built by a named script).
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import * as validators from '../src/generated/validators.js';
import { CONTAINERD, envhook as envhookCli, REPO } from './helpers/bundle.ts';
import { hostFiles, install, crioEtc } from './helpers/install/install.ts';

const ex = (p: string) => path.join(REPO, 'examples', p);
const read = (p: string) => fs.readFileSync(path.join(REPO, p), 'utf8');

t.test('the config examples are what envhook install writes', async (t) => {
  const dir = t.testdir({});
  // a source with this repository's hooks.d templates, if it has them
  const source = path.join(dir, 'src');
  hostFiles(source, { 'hooks/envhook-runtime': '#!/bin/sh\n', 'dist/envhook': '\n' });
  for (const f of ['envhook-precreate.json', 'envhook-createruntime.json']) {
    if (fs.existsSync(path.join(REPO, 'hooks', f))) fs.copyFileSync(path.join(REPO, 'hooks', f), path.join(source, 'hooks', f));
  }
  const installed = (runtime: 'containerd' | 'crio' | 'podman', name: string, files: Record<string, string> = {}) => {
    const root = path.join(dir, name);
    fs.mkdirSync(root, { recursive: true }); // install refuses a --root that is not a directory
    hostFiles(root, files);
    if (runtime === 'crio') crioEtc(root); // a CRI-O node: install refuses one with no crio and no /etc/crio
    // no runtime binary on PATH: the examples are what install writes from the files alone
    const r = install({ runtime, root, source, env: { PATH: '/nonexistent' } });
    t.equal(r.status, 0, r.stderr);
    return (p: string) => fs.readFileSync(path.join(root, p), 'utf8');
  };
  const c2 = installed('containerd', 'c2');
  t.equal(read('examples/containerd/config.toml'), c2('etc/containerd/config.toml'));
  const c3 = installed('containerd', 'c3', { 'etc/containerd/config.toml': 'version = 3\n' });
  t.equal(read('examples/containerd/config-v3.toml'), c3('etc/containerd/config.toml'));
  const crio = installed('crio', 'crio');
  t.equal(read('examples/crio/50-envhook.conf'), crio('etc/crio/crio.conf.d/50-envhook.conf'));
  t.equal(read('examples/crio/envhook-createruntime.json'), crio('usr/share/containers/oci/hooks.d/envhook-createruntime.json'));
  const podman = installed('podman', 'podman');
  t.equal(read('examples/podman/50-envhook.conf'), podman('etc/containers/containers.conf.d/50-envhook.conf'));
  for (const f of ['envhook-precreate.json', 'envhook-createruntime.json'])
    t.equal(read(`examples/podman/${f}`), podman(`usr/local/lib/envhook/hooks.d/${f}`));
  t.equal(
    read('examples/runtimeclass.yaml').replace(/^#.*\n/gm, ''),
    c2('usr/local/lib/envhook/runtimeclass.yaml').replace(/^#.*\n/gm, ''),
  );
});

t.test('containerd accepts examples/containerd/config.toml', { skip: CONTAINERD ? false : 'containerd not installed' }, async (t) => {
  const r = spawnSync(CONTAINERD!, ['--config', ex('containerd/config.toml'), 'config', 'dump'], { encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, 'runtimes.envhook]');
});

const VALIDATOR: Record<string, string> = {
  'envhook.io/env': 'validateEnvAnnotation',
  'envhook.io/envFrom': 'validateEnvFromAnnotation',
  'envhook.io/serviceLinks': 'validateServiceLinksAnnotation',
  'envhook.io/volumeOwners': 'validateVolumeOwners',
};

function yamlFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, {
      withFileTypes: true,
      recursive: true,
    })
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
    .map((e) => path.join(e.parentPath, e.name));
}

t.test('every example manifest parses; every envhook.io/* value is valid against the schemas', async (t) => {
  for (const file of yamlFiles(path.join(REPO, 'examples'))) {
    const rel = path.relative(REPO, file);
    for (const doc of parseAllDocuments(fs.readFileSync(file, 'utf8'))) {
      t.same(doc.errors, [], rel);
      const obj = doc.toJS() as any;
      t.ok(obj?.apiVersion && obj?.kind, `${rel}: a Kubernetes object`);
      const pod = obj.kind === 'Pod' ? obj : obj.spec?.template;
      const annotations: Record<string, string> = pod?.metadata?.annotations ?? {};
      const ours = Object.keys(annotations).filter((k) => k.startsWith('envhook.io/'));
      for (const key of ours) {
        const name = VALIDATOR[key];
        t.ok(name, `${rel}: ${key} is an envhook annotation`);
        const validate = (validators as Record<string, any>)[name!];
        if (!t.ok(validate, `${rel}: ${key}: the build compiles schema ${name}`)) continue;
        const ok = validate(JSON.parse(annotations[key]!));
        t.ok(ok, `${rel}: ${key} ${ok ? '' : JSON.stringify(validate.errors?.[0])}`);
      }
      // containerd passes pod annotations only to the handler that lists them
      if (ours.length) t.equal(pod.spec?.runtimeClassName, 'envhook', `${rel}: runtimeClassName envhook`);
    }
  }
});

t.test('every path the Dockerfile names exists, or is built by a script it runs', async (t) => {
  const dockerfile = read('Dockerfile');
  const scripts = JSON.parse(read('package.json')).scripts as Record<string, string>;
  const ran: string[] = [];
  for (const m of dockerfile.matchAll(/^RUN (?:[A-Z_]+=\S+ )*npm run (\S+)(?: && npm run (\S+))?/gm)) {
    for (const s of [m[1], m[2]].filter(Boolean)) {
      t.ok(scripts[s!], `npm run ${s} exists`);
      ran.push(s!);
    }
  }
  for (const m of dockerfile.matchAll(/^COPY --from=build (.+) (\S+)$/gm)) {
    for (const src of m[1]!.split(/\s+/)) {
      const rel = path.relative('/src', src);
      // npm run build makes the single executable too (scripts/build.mjs ends with build-sea.mjs).
      const seaBy = ran.find((r) => r === 'build:sea' || (r === 'build' && /build-sea/.test(read('scripts/build.mjs'))));
      if (rel.startsWith('dist/'))
        t.ok(rel === 'dist/envhook' && seaBy !== undefined, `${rel} is built by a script the Dockerfile runs (npm run ${seaBy})`);
      else t.ok(fs.existsSync(path.join(REPO, rel)), `${rel} exists`);
    }
  }
  for (const m of dockerfile.matchAll(/^COPY (?!--from)(.+) (\S+)$/gm)) {
    for (const src of m[1]!.split(/\s+/)) t.ok(fs.existsSync(path.join(REPO, src)), `${src} exists`);
  }
  // the image's layout is the one `envhook install` finds from its own executable
  t.match(dockerfile, /COPY --from=build \/src\/dist\/envhook \/opt\/envhook\/dist\/envhook\n/);
  t.match(dockerfile, /COPY --from=build \/src\/hooks\/envhook-runtime .*\/opt\/envhook\/hooks\/\n/);
  t.match(dockerfile, /ENTRYPOINT \["\/opt\/envhook\/dist\/envhook", "install", "--root", "\/host"\]/);
});

t.test('the DaemonSet mounts the host root at /host and runs the installer image with a runtime', async (t) => {
  const ds = parseAllDocuments(read('examples/daemonset.yaml'))[0]!.toJS() as any;
  const spec = ds.spec.template.spec;
  const host = spec.volumes.find((v: any) => v.hostPath?.path === '/');
  t.ok(host, 'hostPath /');
  const init = spec.initContainers[0];
  t.same(init.volumeMounts, [{ name: host.name, mountPath: '/host' }]);
  t.same(init.args, ['--runtime', 'containerd']);
});

t.test('every repository path the README and docs name exists', async (t) => {
  const docs = ['README.md', 'CONTRIBUTING.md', ...fs.readdirSync(path.join(REPO, 'docs')).map((f) => `docs/${f}`)];
  for (const doc of docs) {
    // A path is not the tail of another: `test/hooks/x.test.ts` is one path, not `hooks/x.test.ts` (`../examples/` counts).
    for (const m of read(doc).matchAll(/(?<![\w-])(?<![\w-]\/)((?:examples|docs|hooks|bench|test|src\/schemas)\/[\w./-]*\w)/g)) {
      t.ok(fs.existsSync(path.join(REPO, m[1]!)), `${doc}: ${m[1]}`);
    }
  }
});

t.test('every envhook command an example comment tells the admin to run is one envhook has, with those flags', async (t) => {
  // One run of `envhook COMMAND --help` a command: the examples name install seven times.
  const helps = new Map<string, ReturnType<typeof envhookCli>>();
  const helpOf = (command: string) => helps.get(command) ?? helps.set(command, envhookCli([command, '--help'])).get(command)!;
  for (const file of yamlFiles(path.join(REPO, 'examples'))) {
    const rel = path.relative(REPO, file);
    const comments = fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((l) => (/#(.*)$/.exec(l)?.[1] ? [/#(.*)$/.exec(l)![1]!] : []));
    for (const line of comments) {
      // a command as typed: `envhook install --root /host`, /usr/local/lib/envhook/envhook doctor
      for (const m of line.matchAll(/(?:`|\/(?:envhook|dist)\/)envhook ([a-z]+)((?: --[a-z-]+(?: [^\s`;)]+)?)*)/g)) {
        const [command, flags] = [m[1]!, [...m[2]!.matchAll(/--[a-z-]+/g)].map((f) => f[0])];
        const help = helpOf(command);
        t.equal(help.status, 0, `${rel}: envhook ${command} is a command`);
        for (const f of flags) t.match(help.stdout, new RegExp(`\\s${f}\\b`), `${rel}: envhook ${command} ${f}`);
      }
    }
  }
});
