// The KEP-3721 env-file parser and its fixed vocabulary.
export { parseEnvFile } from './parse.ts';
export { BLANKS, isBlank, MAX_FILE_BYTES, MAX_NAME_CHARS, MAX_VALUE_BYTES, NAME_PATTERN, Reason } from './syntax.ts';
