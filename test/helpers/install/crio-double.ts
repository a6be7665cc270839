// A test double of CRI-O's `crio` (CRI-O is not in Debian), run as
// `node crio-double.ts VERSION ARGS…` by the wrapper test/helpers/install/crio.ts writes. It answers
// `--version` and `[--config FILE] [--config-dir DIR] config` as CRI-O VERSION does, from the
// files themselves:
// - files: FILE, then every regular file under DIR in filepath.Walk's order (names sorted,
//   subdirectories walked where they sort), each decoded over what came before: a table key by
//   key, an array or a runtime handler replaced whole (pkg/config/config.go UpdateFromPath,
//   UpdateFromDropInFile: toml.Decode over the current configuration);
// - defaults: no [crio.nri] before 1.26; enable_nri false before 1.30, true from 1.30 (internal/config/nri New);
//   default_runtime runc before 1.31, crun from 1.31 (pkg/config/config_linux.go);
// - output (pkg/config/template.go, initCrioTemplateConfig and crioTemplateString): every option
//   with its value in force, commented out with "# " (each line of an array too) when that value
//   equals the default; arrays one element a line (`\t"x",`); the runtimes table is one option,
//   all handlers commented or none (RuntimesEqual); nri_plugin_config_dir commented when
//   nri_plugin_dir is the default (its isDefaultValue compares PluginPath); from 1.34 the [crio.nri.default_validator]
//   block, always commented (its isDefaultValue compares the default configuration with
//   itself) but with the values in force. Only [crio.runtime]'s hooks_dir, default_runtime and
//   runtimes, and the whole [crio.nri] table are printed, each under a help line of the double's
//   own, with one example line of the shape CRI-O's help text has: install reads nothing else;
// - a file it cannot decode: no output, one logrus line on stderr and exit status 1
//   (cmd/crio/main.go: app.Before's error to logrus.Fatal), its message the error chain of that
//   version (pkg/config UpdateFromDropInFile `unable to decode configuration FILE: …`, from 1.31
//   wrapped by UpdateFromFile / UpdateFromPath, internal/criocli mergeConfigFiles and app.Before),
//   the TOML error as BurntSushi/toml's ParseError.Error shapes it (`toml: line N: …`, the
//   reason in smol-toml's words, not the Go parser's).
import fs from 'node:fs';
import path from 'node:path';
import { parse, TomlError } from 'smol-toml';
import type { Table } from '../../../src/install/toml.ts';

type Value = string | boolean | string[] | Table;
const [version = '', ...args] = process.argv.slice(2);
const [major, minor] = version.split('.').map(Number) as [number, number];
const atLeast = (m: number) => major > 1 || minor >= m;

function defaults(): Table {
  const runtime = atLeast(31) ? 'crun' : 'runc';
  const rt: Table = {
    default_runtime: runtime,
    hooks_dir: ['/usr/share/containers/oci/hooks.d'],
    runtimes: { [runtime]: { runtime_path: '', runtime_type: 'oci', runtime_root: `/run/${runtime}` } },
  };
  if (!atLeast(26)) return { crio: { runtime: rt } }; // no NRI before 1.26
  const nri: Table = {
    enable_nri: atLeast(30),
    nri_listen: '/var/run/nri/nri.sock',
    nri_plugin_dir: '/opt/nri/plugins',
    nri_plugin_config_dir: '/etc/nri/conf.d',
    nri_disable_connections: false,
    nri_plugin_registration_timeout: '5s',
    nri_plugin_request_timeout: '2s',
  };
  if (atLeast(34)) {
    nri.default_validator = {
      nri_enable_default_validator: false,
      nri_validator_reject_oci_hook_adjustment: false,
      nri_validator_reject_runtime_default_seccomp_adjustment: false,
      nri_validator_reject_unconfined_seccomp_adjustment: false,
      nri_validator_reject_custom_seccomp_adjustment: false,
      nri_validator_reject_namespace_adjustment: false,
      nri_validator_required_plugins: [],
      nri_validator_tolerate_missing_plugins_annotation: '',
    };
  }
  return { crio: { runtime: rt, nri } };
}

const isTable = (v: unknown): v is Table => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `over` decoded onto `base`, as toml.Decode onto CRI-O's struct. */
function decodeOnto(base: Table, over: Table, at: string): Table {
  const out: Table = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const here = at ? `${at}.${k}` : k;
    // a map entry (crio.runtime.runtimes.NAME) is a new value; a struct is filled key by key
    out[k] = isTable(v) && isTable(base[k]) && at !== 'crio.runtime.runtimes' ? decodeOnto(base[k] as Table, v, here) : v;
  }
  return out;
}

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...walk(p));
    else out.push(p);
  }
  return out;
}

const render = (v: Value): string[] =>
  Array.isArray(v) ? ['[', ...v.map((x) => `\t${JSON.stringify(x)},`), ']'] : [typeof v === 'string' ? JSON.stringify(v) : String(v)];
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** One option as CRI-O prints it: `key = value`, each line commented when `isDefault`. */
function option(key: string, v: Value, isDefault: boolean): string[] {
  const [first, ...rest] = render(v);
  return [`${key} = ${first}`, ...rest].map((l) => (isDefault ? `# ${l}` : l));
}

/** A file CRI-O could not decode: what `crio` prints for it on stderr before it exits 1. */
class DecodeFailure extends Error {}

/** `file` decoded, or the DecodeFailure of CRI-O `version` (`fromDir`: a file of --config-dir). */
function decode(file: string, fromDir: boolean): Table {
  const text = fs.readFileSync(file, 'utf8');
  try {
    return parse(text) as Table;
  } catch (err) {
    if (!(err instanceof TomlError)) throw err;
    const reason = err.message.split('\n')[0]!.replace(/^Invalid TOML document: /, '');
    let msg = `unable to decode configuration ${file}: toml: line ${err.line}: ${reason}`;
    if (atLeast(31))
      msg = `get and merge config from context: ${fromDir ? `update config from path: walk path: ${msg}` : `update config from file: update config from drop-in file: ${msg}`}`;
    throw new DecodeFailure(`time=${JSON.stringify(logrusTime())} level=fatal msg=${JSON.stringify(msg)}\n`);
  }
}

/** logrus's time field: its default RFC 3339 before 1.31, then the formatter app.Before sets first (1.31's, RFC 3339 with nanoseconds from 1.32). */
function logrusTime(now = new Date()): string {
  const iso = now.toISOString(); // 2026-11-27T18:00:00.123Z
  if (!atLeast(31)) return iso.replace(/\.\d+Z$/, 'Z');
  const nanos = `${iso.slice(20, 23)}000000`;
  return atLeast(32) ? iso.replace(/\.\d+Z$/, `.${nanos}Z`) : `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${nanos}Z`;
}

function config(): string {
  const files: [string, boolean][] = [];
  for (let i = 0; i < args.length - 1; i++) {
    if (args[i] === '--config') files.push([args[++i]!, false]);
    else if (args[i] === '--config-dir' && fs.existsSync(args[i + 1]!))
      files.push(...walk(args[++i]!).map((f): [string, boolean] => [f, true]));
  }
  const dc = defaults();
  let c = dc;
  for (const [f, fromDir] of files) c = decodeOnto(c, decode(f, fromDir), '');
  const [rt, drt] = [c, dc].map((t) => (t.crio as Table).runtime as Table) as [Table, Table];
  const [nri, dnri] = [c, dc].map((t) => (t.crio as Table).nri as Table | undefined) as [Table, Table | undefined];
  const out = ['# CRI-O configuration (the double prints the options envhook install reads).', '[crio]', '', '[crio.runtime]', ''];
  for (const key of ['default_runtime', 'hooks_dir'])
    out.push(`# help for ${key}.`, ...option(key, rt[key] as Value, same(rt[key], drt[key])), '');
  // CRI-O's help text above the runtimes holds an example handler, commented
  out.push('# An example handler:', '# [crio.runtime.runtimes.runtime-handler]', '# runtime_path = "/path/to/the/executable"', '');
  const runtimesDefault = same(rt.runtimes, drt.runtimes);
  for (const [name, h] of Object.entries(rt.runtimes as Table).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const handler = h as Table;
    out.push(`${runtimesDefault ? '# ' : ''}[crio.runtime.runtimes.${name}]`);
    for (const key of ['runtime_path', 'runtime_type', 'runtime_root'])
      out.push(...option(key, (handler[key] as Value) ?? '', runtimesDefault));
    out.push('');
  }
  if (dnri) out.push(...nriTable(nri, dnri));
  out.push('[crio.stats]', '');
  return out.join('\n');
}

function nriTable(nri: Table, dnri: Table): string[] {
  const out = ['# CRI-O NRI configuration.', '[crio.nri]', ''];
  for (const key of Object.keys(dnri)) {
    // a quirk: nri_plugin_config_dir is commented when nri_plugin_dir is the default
    const by = key === 'nri_plugin_config_dir' ? 'nri_plugin_dir' : key;
    if (key !== 'default_validator') out.push(`# help for ${key}.`, ...option(key, nri[key] as Value, same(nri[by], dnri[by])), '');
  }
  if (dnri.default_validator) {
    const v = nri.default_validator as Table;
    out.push('# NRI default validator configuration.', '# [crio.nri.default_validator]');
    for (const key of Object.keys(dnri.default_validator as Table)) out.push(...option(key, v[key] as Value, true));
    out.push('');
  }
  return out;
}

if (atLeast(26) && !atLeast(28)) {
  // 1.26 and 1.27 printed nri_config_file where later versions print four other options
  process.stderr.write(`the crio double does not play CRI-O ${version}\n`);
  process.exitCode = 2;
} else if (args[0] === '--version') {
  // urfave/cli's `crio version <app.Version>`, the version info's further lines indented
  process.stdout.write(
    `crio version ${version}\n   GitCommit:        0000000000000000000000000000000000000000\n   GitTreeState:     clean\n   GoVersion:        go1.24.0\n   Platform:         linux/amd64\n`,
  );
} else if (args.at(-1) === 'config') {
  try {
    process.stdout.write(config());
  } catch (err) {
    if (!(err instanceof DecodeFailure)) throw err;
    process.stderr.write(err.message);
    process.exitCode = 1;
  }
} else {
  process.stderr.write(`the crio double answers --version and config only, not: ${args.join(' ')}\n`);
  process.exitCode = 2;
}
