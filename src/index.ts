// The public library API.
export { EnvhookError, EnvFileError } from './errors.ts';
