// CRI-O's default runtime, which the envhook handler stands in front of (as containerd's install
// copies the default runtime's options): `default_runtime` of [crio.runtime] and that handler's
// `runtime_path` (the real runtime the front execs; CRI-O looks an empty one up by the handler's
// name on PATH) and `runtime_root` (its state directory, /run/<name> by default). Read from `crio
// config` when there is a crio to ask, else from the files as CRI-O merges them (the last file
// that sets an option wins; a handler table replaces the earlier one whole). A handler that is
// not an OCI runtime (runtime_type "vm" or "pod") has no runc command line to stand in front of:
// refused, naming --oci-runtime. With neither a binary nor a file that sets it, the default
// depends on CRI-O's version (runc before 1.31, crun from 1.31): runc, and a note that says so.
import { EnvhookError } from '../../errors.ts';
import type { Layout } from '../layout.ts';
import type { RuntimeBinary } from '../../oci/runtime-binary.ts';
import { tableAt, type Table } from '../toml.ts';
import { crioConfigDump } from './crio-check.ts';
import { readCrioFiles } from './crio-files.ts';

export interface CrioDefaultRuntime {
  name: string;
  /** The real runtime for the front: runtime_path, else the name (found on PATH). */
  runtime: string;
  /** runtime_root for envhook's handler: the default handler's, else /run/<name>. */
  root: string;
  /** Where the reading came from, for the admin's note. */
  from: string;
}

export function crioDefaultRuntime(layout: Layout, bin: RuntimeBinary | undefined): CrioDefaultRuntime {
  const read = bin ? fromDump(layout, bin) : fromFiles(layout);
  const name = read.name ?? 'runc';
  const h = read.handler;
  const type = typeof h?.runtime_type === 'string' && h.runtime_type !== '' ? h.runtime_type : 'oci';
  if (type !== 'oci') {
    throw new EnvhookError(
      `CRI-O's default runtime "${name}" (${read.from}) has runtime_type "${type}", which envhook's front cannot run in front of: name the OCI runtime it should run with --oci-runtime (e.g. --oci-runtime runc)`,
    );
  }
  const path = typeof h?.runtime_path === 'string' && h.runtime_path !== '' ? h.runtime_path : name;
  const root = typeof h?.runtime_root === 'string' && h.runtime_root !== '' ? h.runtime_root : `/run/${name}`;
  const from = read.name === undefined ? `${read.from}: runc assumed, CRI-O 1.31 and later default to crun` : read.from;
  return { name, runtime: path, root, from };
}

interface Reading {
  name: string | undefined;
  handler: Table | undefined;
  from: string;
}

function fromDump(layout: Layout, bin: RuntimeBinary): Reading {
  const rt = tableAt(crioConfigDump(bin, layout), 'crio', 'runtime');
  const name = typeof rt?.default_runtime === 'string' ? rt.default_runtime : undefined;
  // a handler CRI-O prints commented out has its default values: none read here
  return { name, handler: name === undefined ? undefined : tableAt(rt, 'runtimes', name), from: 'crio config' };
}

function fromFiles(layout: Layout): Reading {
  let name: string | undefined;
  let nameFrom = '';
  const handlers = new Map<string, Table>();
  for (const { file, doc } of readCrioFiles(layout)) {
    const rt = tableAt(doc, 'crio', 'runtime');
    if (typeof rt?.default_runtime === 'string') [name, nameFrom] = [rt.default_runtime, file];
    for (const k of Object.keys(tableAt(rt, 'runtimes') ?? {})) {
      const t = tableAt(rt, 'runtimes', k);
      if (t) handlers.set(k, t);
    }
  }
  const from = name === undefined ? "not set in CRI-O's files and no crio to ask" : `default_runtime in ${nameFrom}`;
  return { name, handler: name === undefined ? undefined : handlers.get(name), from };
}
