// The public library API.
export { EnvhookError, EnvFileError } from './errors.ts';
// Reason lets library users match a rejection without parsing the message.
export { parseEnvFile, Reason, MAX_FILE_BYTES, MAX_NAME_CHARS, MAX_VALUE_BYTES } from './envfile/envfile.ts';
