// The local images: an OCI image layout whose digests, sizes and diff_ids are right (containerd
// checks them on import), one shared busybox layer, each image named in full.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { BUSYBOX } from '../bundle.ts';
import { writeImageTar } from './oci-image.ts';

t.test('an OCI layout tarball with two images over one layer', { skip: BUSYBOX ? false : 'busybox-static not installed' }, async (t) => {
  const dir = t.testdir({});
  const tar = writeImageTar(path.join(dir, 'img'), [
    { name: 'docker.io/x/pause:1', entrypoint: ['/bin/sleep', '9'], cmd: [] },
    { name: 'docker.io/x/box:2' },
  ]);
  const out = path.join(dir, 'out');
  fs.mkdirSync(out);
  execFileSync('tar', ['-C', out, '-xf', tar]);
  const blob = (d: string) => fs.readFileSync(path.join(out, 'blobs/sha256', d.replace('sha256:', '')));
  const json = (d: string) => JSON.parse(blob(d).toString());
  for (const f of fs.readdirSync(path.join(out, 'blobs/sha256'))) {
    t.equal(crypto.createHash('sha256').update(blob(f)).digest('hex'), f, `blob ${f.slice(0, 12)} is named by its digest`);
  }
  const index = JSON.parse(fs.readFileSync(path.join(out, 'index.json'), 'utf8'));
  t.same(
    index.manifests.map((m: any) => m.annotations['io.containerd.image.name']),
    ['docker.io/x/pause:1', 'docker.io/x/box:2'],
  );
  const [pause, box] = index.manifests.map((m: any) => {
    t.equal(blob(m.digest).length, m.size);
    return json(m.digest);
  });
  t.equal(pause.layers[0].digest, box.layers[0].digest, 'one layer, shared');
  const config = json(pause.config.digest);
  t.same(config.rootfs.diff_ids, [pause.layers[0].digest], 'uncompressed layer: diff_id = digest');
  t.same(config.config.Entrypoint, ['/bin/sleep', '9']);
  const files = execFileSync('tar', ['-tvf', path.join(out, 'blobs/sha256', pause.layers[0].digest.replace('sha256:', ''))], {
    encoding: 'utf8',
  });
  t.match(files, /\.\/bin\/busybox\n/);
  t.match(files, /\.\/bin\/sh -> busybox/);
});
