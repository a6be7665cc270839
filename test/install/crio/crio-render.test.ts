// Reading `crio config`: options equal to CRI-O's default are printed commented out and read as
// set; the [crio.nri.default_validator] block, commented by CRI-O 1.34 to 1.36 whatever it holds,
// is read with its values; help-text example lines of the same shape are not. The text below is
// shaped as CRI-O prints it (pkg/config/template.go; lines written here), and the double's own
// output is read back to the values its files set.
import t from 'tap';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { readCrioConfig } from '../../../src/install/crio/crio-render.ts';
import { crioDouble } from '../../helpers/install/crio.ts';

const PRINTED = [
  '[crio.runtime]',
  '# Path to OCI hooks directories.',
  '# hooks_dir = [',
  '# \t"/usr/share/containers/oci/hooks.d",',
  '# ]',
  '# Each entry in the table should follow the format:',
  '# [crio.runtime.runtimes.runtime-handler]',
  '# runtime_path = "/path/to/the/executable"',
  '[crio.runtime.runtimes.envhook]',
  'runtime_path = "/usr/local/lib/envhook/envhook-runtime"',
  '[crio.nri]',
  '# enable_nri = true',
  '# nri_listen = "/var/run/nri/nri.sock"',
  'nri_plugin_dir = "/srv/nri/plugins"',
  '# [crio.nri.default_validator]',
  '# nri_enable_default_validator = true',
  '# nri_validator_required_plugins = [',
  '# \t"other",',
  '# \t"envhook",',
  '# ]',
  '# nri_validator_tolerate_missing_plugins_annotation = ""',
  '[crio.stats]',
  '',
].join('\n');

t.test('commented defaults and the commented validator are read; other commented lines are not', async (t) => {
  t.same(readCrioConfig(PRINTED, 'crio config'), {
    crio: {
      runtime: {
        hooks_dir: ['/usr/share/containers/oci/hooks.d'],
        runtimes: { envhook: { runtime_path: '/usr/local/lib/envhook/envhook-runtime' } },
      },
      nri: {
        enable_nri: true,
        nri_plugin_dir: '/srv/nri/plugins',
        default_validator: { nri_enable_default_validator: true, nri_validator_required_plugins: ['other', 'envhook'] },
      },
      stats: {},
    },
  });
});

t.test('an uncommented validator block (a CRI-O that compares it with the files) reads the same', async (t) => {
  const text =
    '[crio.nri]\nenable_nri = false\n[crio.nri.default_validator]\nnri_enable_default_validator = false\nnri_validator_required_plugins = [\n]\n';
  t.same(readCrioConfig(text, 'crio config'), {
    crio: { nri: { enable_nri: false, default_validator: { nri_enable_default_validator: false, nri_validator_required_plugins: [] } } },
  });
});

t.test("the double's output reads back to the values its files set, commented or not", async (t) => {
  const dir = t.testdir({
    'crio.conf.d': {
      '50-x.conf':
        '[crio.nri]\nenable_nri = true\nnri_plugin_dir = "/srv/p"\n[crio.nri.default_validator]\nnri_validator_required_plugins = ["envhook"]\n',
    },
  });
  const crio = crioDouble(dir, '1.36.3');
  const r = spawnSync(crio.bin, ['--config-dir', path.join(dir, 'crio.conf.d'), 'config'], { encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /^# enable_nri = true$/m, 'the default, commented');
  t.match(r.stdout, /^nri_plugin_dir = "\/srv\/p"$/m, 'a value that differs, not');
  t.match(
    r.stdout,
    /^# \[crio\.nri\.default_validator\]\n(# .*\n)*# nri_validator_required_plugins = \[\n# \t"envhook",\n# \]$/m,
    'the validator commented, with its values',
  );
  const nri = (readCrioConfig(r.stdout, 'crio config').crio as any).nri;
  t.equal(nri.enable_nri, true);
  t.equal(nri.nri_plugin_dir, '/srv/p');
  t.same(nri.default_validator, { nri_enable_default_validator: false, nri_validator_required_plugins: ['envhook'] });
});
