// A whole file as one value (`valueFrom.fileRef`, docs/design.md#env-from-other-volumes): the bytes a secret key file or a
// CSI driver's secret file holds, with no env-file syntax. Reasons are fixed phrases: never a
// byte of the file, not even an offset into it.
// The file is read as an env file is (files.ts): at most 64 KiB, so `NAME=value` stays under
// the kernel's 128 KiB for one variable.

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const LF = 0x0a;

export class FileValueError extends Error {
  override name = 'FileValueError';
}

/**
 * The value of the file: its text with every trailing line feed removed, as `$(cat FILE)` and
 * the `*_FILE` convention of Docker's official images (`$(< FILE)`) give it, which is what an
 * editor's or `echo`'s final newline in a mounted secret needs. A carriage return is kept. A NUL
 * byte is refused (execve ends a variable there) and so is invalid UTF-8 (the runtime's spec is
 * JSON, which would turn it into U+FFFD silently).
 */
export function fileValue(bytes: Uint8Array): string {
  if (bytes.includes(0)) throw new FileValueError('contains a NUL byte (a variable cannot hold one)');
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === LF) end--;
  try {
    return utf8.decode(bytes.subarray(0, end));
  } catch {
    throw new FileValueError("is not valid UTF-8 (a variable in the runtime's JSON spec must be text)");
  }
}
