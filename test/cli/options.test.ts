// addSettingFlags on a commander command, and settingsFrom: flags over the config file.
import t from 'tap';
import path from 'node:path';
import { Command } from 'commander';
import { EnvhookError } from '../../src/errors.ts';
import { addSettingFlags, settingsFrom, type SettingOptions } from '../../src/cli/options.ts';

const dir = t.testdir({ 'config.json': JSON.stringify({ kubeletRoot: '/file/kubelet', logLevel: 'warn', runtime: '/file/runc' }) });
const saved = process.env.ENVHOOK_CONFIG;
process.env.ENVHOOK_CONFIG = path.join(dir, 'config.json');
t.teardown(() => {
  if (saved === undefined) delete process.env.ENVHOOK_CONFIG;
  else process.env.ENVHOOK_CONFIG = saved;
});

/** The options commander gives an action of a command with the setting flags. */
function parse(args: string[], runtime = false): SettingOptions {
  const cmd = addSettingFlags(new Command('x').exitOverride().configureOutput({ writeErr: () => {} }), { runtime });
  cmd.parse(args, { from: 'user' });
  return cmd.opts<SettingOptions>();
}

t.test('the flags commander accepts, --runtime only where asked for', async (t) => {
  t.same(parse(['--kubelet-root', '/k', '--log-file', '/l', '--log-level', 'debug']), {
    kubeletRoot: '/k',
    logFile: '/l',
    logLevel: 'debug',
  });
  t.same(parse(['--runtime', '/r'], true), { runtime: '/r' });
  t.throws(() => parse(['--runtime', '/r']), { code: 'commander.unknownOption' });
});

t.test('settingsFrom: a flag wins over the config file; what no flag gives comes from the file', async (t) => {
  const s = settingsFrom(parse(['--kubelet-root', '/flag/kubelet', '--log-level', 'error']));
  t.equal(s.kubeletRoot, '/flag/kubelet');
  t.equal(s.logLevel, 'error');
  t.equal(s.runtime, '/file/runc');
  t.equal(settingsFrom({ runDir: '/run/x' }).runDir, '/run/x');
  t.equal(settingsFrom({}).logLevel, 'warn');
});

t.test('settingsFrom: a bad --log-level is an EnvhookError naming the flag', async (t) => {
  const err = t.throws(() => settingsFrom(parse(['--log-level', 'loud']))) as Error;
  t.ok(err instanceof EnvhookError);
  t.equal(err.message, '--log-level "loud": must be one of "fatal", "error", "warn", "info", "debug", "trace", "silent"');
});
