// Reading what `crio config` prints. CRI-O prints every option with the value in force, but
// comments out (`# key = value`, each line of an array too) every option whose value equals its
// default: pkg/config/template.go, crioTemplateString keeps an option's `{{ $.Comment }}` prefix
// ("# ") when initCrioTemplateConfig found it isDefaultValue. From 1.34 (at least to 1.36) the
// whole [crio.nri.default_validator] block is always commented: its isDefaultValue is
// dc.NRI.IsDefaultValidatorDefaultConfig(), the default configuration compared with itself. Its
// lines still print the configuration's own values, the ones CRI-O applies. So a commented value
// line is a value: the default, or for the validator whatever the files set.
// Only the options install reads are taken back from comments: the help text above CRI-O's
// options holds example lines of the same shape (`# runtime_path = "/path/to/the/executable"`).
import { parseToml, type Table } from '../toml.ts';

const VALIDATOR = 'crio.nri.default_validator';
/** Per table, the options install reads, wherever CRI-O prints them commented. */
const READ: Record<string, readonly string[]> = {
  'crio.runtime': ['hooks_dir', 'default_runtime'],
  'crio.nri': ['enable_nri', 'nri_plugin_dir'],
  [VALIDATOR]: ['nri_enable_default_validator', 'nri_validator_required_plugins'],
};

/** The configuration `crio config` printed (`text`), its commented values taken as set. */
export function readCrioConfig(text: string, source: string): Table {
  const out: string[] = [];
  let table = '';
  let inArray = false; // inside a commented array taken back
  for (const line of text.split('\n')) {
    if (inArray) {
      inArray = line.startsWith('# ') && line.slice(2).trim() !== ']';
      out.push(line.startsWith('# ') ? line.slice(2) : line);
      continue;
    }
    const header = /^\[([^\]]+)\]\s*$/.exec(line);
    if (header) table = header[1]!.trim();
    const commented = /^# (?:\[(crio\.nri\.default_validator)\]|([a-z_]+) = (.*))$/.exec(line);
    if (commented?.[1] && table === 'crio.nri') {
      table = VALIDATOR;
      out.push(line.slice(2));
    } else if (commented?.[2] && READ[table]?.includes(commented[2])) {
      out.push(line.slice(2));
      inArray = commented[3]!.trim() === '[';
    } else out.push(line);
  }
  return parseToml(out.join('\n'), source);
}
