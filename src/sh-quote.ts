// A POSIX sh single-quoted word: every byte as it is, `'` as `'\''`. For the sh files envhook
// writes (the install's wrappers, the exec sidecar the front sources).
export function shQuote(s: string): string {
  return `'${s.replaceAll("'", "'\\''")}'`;
}
