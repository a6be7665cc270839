// ASCII only: a non-ASCII character becomes its \u escape, the same value in a string, regular
// expression, template or identifier, and still a comment in one. esbuild escapes everything
// but comments; one non-ASCII comment makes V8 hold the whole bundle as a two-byte string
// (~1 MiB more for envhook-main.cjs, in every process and in the resident NRI plugin).
export const ascii = (text) => text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
