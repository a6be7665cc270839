// The two image recipes stay one image: the Dockerfile (for a machine with a registry) copies
// exactly IMAGE_FILES, the files scripts/image-context.ts puts in Containerfile.scratch's context,
// and both end in the same ENTRYPOINT and CMD; the libraries the context adds are those the
// executable's ELF headers name (readelf), as ldd resolves them.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { REPO, whichSync } from '../helpers/bundle.ts';
import { imageDirectives } from '../helpers/install/daemonset.ts';
import { CONTAINERFILE, IMAGE_FILES, imageLabels, sharedLibraries, withLabels } from '../../scripts/image-context.ts';

const dockerfile = fs.readFileSync(path.join(REPO, 'Dockerfile'), 'utf8');
const containerfile = fs.readFileSync(CONTAINERFILE, 'utf8');
const lastStage = (text: string) => text.slice(text.lastIndexOf('\nFROM ') + 1);

t.test("the Dockerfile's image holds IMAGE_FILES, copied from the build stage's checkout", async (t) => {
  const stage = lastStage(dockerfile);
  const files: Record<string, string> = {};
  for (const m of stage.matchAll(/^COPY --from=build (.+)$/gm)) {
    const words = m[1]!.trim().split(/\s+/);
    const dest = words.pop()!;
    for (const src of words) {
      t.ok(src.startsWith('/src/'), `${src}: from the checkout`);
      files[dest.endsWith('/') ? dest + path.basename(src) : dest] = path.relative('/src', src);
    }
  }
  t.same(files, IMAGE_FILES);
  t.same(stage.match(/^(COPY|ADD|RUN)\b(?! --from=build)/gm), null, 'nothing else goes into the final image');
});

t.test('Containerfile.scratch: no base image, the context made by scripts/image-context.ts', async (t) => {
  const d = imageDirectives(containerfile);
  t.equal(d.from, 'scratch');
  t.same(containerfile.match(/^(COPY|ADD|RUN)\b.*$/gm), ['COPY rootfs/ /']);
});

t.test('the same ENTRYPOINT and CMD, and the entrypoint is one of the files', async (t) => {
  const docker = imageDirectives(dockerfile);
  const scratch = imageDirectives(containerfile);
  t.same(scratch.entrypoint, docker.entrypoint);
  t.same(scratch.cmd, docker.cmd);
  t.same(docker.entrypoint?.slice(0, 4), ['/opt/envhook/dist/envhook', 'install', '--root', '/host']);
  t.ok(docker.entrypoint![0]! in IMAGE_FILES);
});

const SEA = path.join(REPO, 'dist/envhook');

const missing = !fs.existsSync(SEA)
  ? 'dist/envhook not built (npm run build makes it unless ENVHOOK_NO_SEA is set)'
  : !whichSync('readelf')
    ? 'readelf not installed (apt-get install binutils)'
    : false;

t.test('the libraries: what readelf says the executable needs, as ldd resolves them', { skip: missing }, async (t) => {
  const libs = sharedLibraries(SEA);
  const dynamic = execFileSync('readelf', ['--dynamic', SEA], { encoding: 'utf8' });
  const needed = [...dynamic.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1]!);
  t.ok(needed.length > 0, `NEEDED: ${needed.join(', ')}`);
  for (const so of needed)
    t.ok(
      libs.some((l) => path.basename(l) === so),
      `${so} is in the image`,
    );
  const interp = /Requesting program interpreter: ([^\]]+)\]/.exec(
    execFileSync('readelf', ['--program-headers', SEA], { encoding: 'utf8' }),
  )?.[1];
  t.ok(interp && libs.includes(interp), `the program interpreter ${interp} at its own path`);
  for (const l of libs) t.ok(path.isAbsolute(l) && fs.existsSync(l), `${l} exists here`);
});

// docs/helm.md's step, run as a fresh machine runs it: Debian's Node 20 and npm on PATH, the
// checkout after `npm ci` and `npm run build` (npm runs the script with the checkout's Node 24).
const STEP = 'npm run image-context -- /tmp/envhook-image';
const systemNpm = ['/usr/bin/npm', '/usr/local/bin/npm'].find((p) => fs.existsSync(p));

t.test(
  `the documented step (${STEP}) runs with the machine's own Node and npm`,
  { skip: missing || (!systemNpm && 'no npm on this machine') },
  async (t) => {
    t.match(fs.readFileSync(path.join(REPO, 'docs/helm.md'), 'utf8'), `\n  ${STEP} `, 'the step docs/helm.md gives');
    const dir = path.join(t.testdir(), 'context');
    const env = { HOME: process.env.HOME ?? '/root', PATH: `${path.dirname(systemNpm!)}:/usr/bin:/bin` };
    const r = spawnSync(systemNpm!, ['run', '-s', 'image-context', '--', dir], { cwd: REPO, env, encoding: 'utf8', timeout: 120_000 });
    t.equal(r.status, 0, r.stderr);
    t.match(r.stderr, new RegExp(`^wrote ${dir}: Containerfile and rootfs/ \\(/opt/envhook/dist/envhook, `));
    for (const f of ['Containerfile', 'rootfs/opt/envhook/dist/envhook', 'rootfs/usr/sbin/chroot'])
      t.ok(fs.existsSync(path.join(dir, f)), `${f} written`);
  },
);

t.test(
  "both recipes label the image (OCI): version, revision, licenses, and no source (package.json names no repository); the context's values are the build's",
  async (t) => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'));
    const labels = (text: string) =>
      Object.fromEntries([...text.matchAll(/(org\.opencontainers\.image\.\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    const want = {
      'org.opencontainers.image.title': 'envhook',
      'org.opencontainers.image.version': '$VERSION',
      'org.opencontainers.image.revision': '$REVISION',
      'org.opencontainers.image.licenses': pkg.license,
    };
    t.same(labels(lastStage(dockerfile)), want, 'Dockerfile');
    t.same(labels(containerfile), want, 'Containerfile.scratch');
    for (const text of [lastStage(dockerfile), containerfile])
      t.match(text, new RegExp(`^ARG VERSION=${pkg.version.replace(/\./g, '\\.')}$`, 'm'));
    t.match(dockerfile, /^RUN ENVHOOK_COMMIT="\$REVISION" npm run build$/m, 'the build stage names the commit it is given');
    t.equal(
      withLabels('FROM scratch\nARG VERSION=0\nARG REVISION=unknown\n', { VERSION: '1.2.3', REVISION: 'abc1234' }),
      'FROM scratch\nARG VERSION=1.2.3\nARG REVISION=abc1234\n',
    );
    t.throws(() => withLabels('FROM scratch\n', { VERSION: '1' }), /no ARG VERSION=/);
  },
);

t.test(
  "the context's Containerfile: the version and commit the executable names",
  { skip: fs.existsSync(SEA) ? false : 'dist/envhook not built' },
  async (t) => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'));
    const line = execFileSync(SEA, ['version'], { encoding: 'utf8' });
    const commit = /^envhook \S+ \(([^;]+); node /.exec(line)![1];
    t.same(imageLabels(), { VERSION: pkg.version, REVISION: commit }, line.trim());
  },
);
