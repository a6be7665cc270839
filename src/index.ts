// The public library API.
export { EnvhookError, EnvFileError } from './errors.ts';
export { parseEnvFile } from './envfile/index.ts';
