// OCI images made locally from busybox-static, so CRI tests need no registry: one layer (the
// rootfs of bundle.ts's makeRootfs), a config per image (entrypoint, cmd, env), written as an
// OCI image-layout tarball that `ctr images import` reads. Names carry containerd's
// `io.containerd.image.name` annotation, so the import names each image in full.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { makeRootfs } from '../bundle.ts';

export interface ImageSpec {
  /** Full reference, e.g. docker.io/envhook/busybox:test. */
  name: string;
  entrypoint?: string[];
  cmd?: string[];
  env?: string[];
}

const sha256 = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');
const ARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', ppc64: 'ppc64le', s390x: 's390x' };

/** Writes `<dir>/images.tar` holding every image (one shared layer); returns its path. */
export function writeImageTar(dir: string, images: readonly ImageSpec[]): string {
  const layout = path.join(dir, 'layout');
  const blobs = path.join(layout, 'blobs/sha256');
  fs.mkdirSync(blobs, { recursive: true });
  const blob = (data: Buffer, mediaType: string) => {
    const digest = sha256(data);
    fs.writeFileSync(path.join(blobs, digest), data);
    return { mediaType, digest: `sha256:${digest}`, size: data.length };
  };
  const rootfs = makeRootfs(path.join(dir, 'rootfs'));
  // Uncompressed, sorted, root-owned: the same bytes (and digest) for the same busybox.
  const layerTar = path.join(dir, 'layer.tar');
  execFileSync('tar', ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=@0', '-C', rootfs, '-cf', layerTar, '.']);
  const layerBytes = fs.readFileSync(layerTar);
  fs.rmSync(layerTar);
  const layer = blob(layerBytes, 'application/vnd.oci.image.layer.v1.tar');
  const manifests = images.map((img) => {
    const config = {
      architecture: ARCH[process.arch] ?? process.arch,
      os: 'linux',
      config: { Env: img.env ?? ['PATH=/bin'], Entrypoint: img.entrypoint ?? null, Cmd: img.cmd ?? ['sh'], WorkingDir: '/' },
      rootfs: { type: 'layers', diff_ids: [layer.digest] },
    };
    const configDesc = blob(Buffer.from(JSON.stringify(config)), 'application/vnd.oci.image.config.v1+json');
    const manifest = { schemaVersion: 2, mediaType: 'application/vnd.oci.image.manifest.v1+json', config: configDesc, layers: [layer] };
    const desc = blob(Buffer.from(JSON.stringify(manifest)), 'application/vnd.oci.image.manifest.v1+json');
    const tag = img.name.slice(img.name.lastIndexOf(':') + 1);
    return { ...desc, annotations: { 'io.containerd.image.name': img.name, 'org.opencontainers.image.ref.name': tag } };
  });
  fs.writeFileSync(path.join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  fs.writeFileSync(
    path.join(layout, 'index.json'),
    JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.index.v1+json', manifests }),
  );
  const out = path.join(dir, 'images.tar');
  execFileSync('tar', ['-C', layout, '-cf', out, 'oci-layout', 'index.json', 'blobs']);
  fs.rmSync(layout, { recursive: true });
  fs.rmSync(rootfs, { recursive: true });
  return out;
}
