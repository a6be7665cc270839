// Reading a file an admin or author names on the command line (`check`, `lint`, `convert`):
// at most `limit` bytes of a regular file. O_NONBLOCK: opening a FIFO with no writer must not
// hang; fstat on the open descriptor then refuses it, and devices, directories and sockets,
// without a race. Symlinks are followed: the file is named by the person running the command.
import fs from 'node:fs';
import { EnvhookError, errnoReason } from '../errors.ts';

export function readRegularFile(file: string, limit: number): Uint8Array {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (cause) {
    throw new EnvhookError(`cannot read ${file}: ${errnoReason(cause)}`, { cause });
  }
  try {
    if (!fs.fstatSync(fd).isFile()) throw new EnvhookError(`${file}: not a regular file`);
    const buf = new Uint8Array(limit);
    let size = 0;
    for (let got = 1; got > 0 && size < buf.length; size += got) {
      got = fs.readSync(fd, buf, size, buf.length - size, null);
    }
    return buf.subarray(0, size);
  } catch (cause) {
    if (cause instanceof EnvhookError) throw cause;
    throw new EnvhookError(`cannot read ${file}: ${errnoReason(cause)}`, { cause });
  } finally {
    fs.closeSync(fd);
  }
}
