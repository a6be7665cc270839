// Row 4: time and peak RSS of `inject` at 1×, 10× and 100× of one dimension, each
// against the floor of the same work in the same run (JSON parse + atomic write; chown -R).
import path from 'node:path';
import { cmd, measure, peakRss, loadavg } from './harness.mjs';
import { NODE, REPO, builds, injectMissing, injectArgs, verifyPlan } from './cli.mjs';
import { makePod, makeBundle, bundleDir, envFileText, serviceEnv, resetOwners } from './fixtures.mjs';

export const FACTORS = [1, 10, 100];
const FLOOR = path.join(REPO, 'bench/floor.mjs');

// Each dimension: the 1× unit, a fixture for k×, and the floor command for it.
export const DIMENSIONS = {
  'process env (350 vars = 50 services, links removed)': {
    size: (k) => `${350 * k} vars`,
    plan: (k) => ({ env: 0, removed: 350 * k, owners: 0 }),
    make: (dir, k) => fixture(dir, {}, { env: serviceEnv(50 * k), annotations: { 'envhook.io/serviceLinks': { app: false } } }),
    floor: (fx) => [NODE, FLOOR, fx.bundle],
  },
  'env file (655 B envFrom)': {
    size: (k) => `${((655 * k) / 1024).toFixed(1)} KiB`,
    // The variable count follows the bytes: checked to be non-zero below.
    plan: () => ({ removed: 0, owners: 0 }),
    make: (dir, k) =>
      fixture(
        dir,
        { envFiles: { 'big.env': envFileText({ bytes: 655 * k }) } },
        {
          annotations: { 'envhook.io/envFrom': { app: [{ prefix: 'P_', fileRef: { volumeName: 'config', path: 'big.env' } }] } },
        },
      ),
    floor: (fx) => [NODE, FLOOR, fx.bundle, path.join(fx.pod.emptyDir, 'big.env')],
  },
  'projected volume (100 files to chown)': {
    size: (k) => `${100 * k} files`,
    plan: (k) => ({ env: 0, removed: 0, owners: 100 * k }),
    make: (dir, k) =>
      fixture(dir, { projectedFiles: 100 * k }, { annotations: { 'envhook.io/volumeOwners': [{ volume: 'certs', defaultUser: 1000 }] } }),
    floor: (fx) => ['chown', '-R', '1000', fx.pod.projected.dir],
  },
};

function fixture(dir, podOpts, bundleOpts) {
  const pod = makePod(dir, podOpts);
  const bundle = bundleDir(dir);
  const restore = makeBundle(bundle, pod, bundleOpts);
  return { pod, bundle, restore };
}

/** Rows { dimension, factor, size, ms, floorMs, cpu, floorCpu, rss, floorRss } or { dimension, skip }. */
export function scale(work) {
  const skip = injectMissing();
  if (skip) return Object.keys(DIMENSIONS).map((dimension) => ({ dimension, skip }));
  const rows = [];
  for (const [dimension, d] of Object.entries(DIMENSIONS)) {
    for (const k of FACTORS) {
      const fx = d.make(path.join(work, `scale-${rows.length}`), k);
      const planned = verifyPlan(fx, d.plan(k));
      if (!(planned.env > 0 || planned.removed > 0 || planned.owners > 0)) throw new Error(`${dimension} ${k}×: inject plans no work`);
      const prepare = () => (fx.restore(), resetOwners(fx.pod));
      const subject = cmd('envhook', injectArgs(builds().bundle, fx), { prepare });
      const floor = cmd('floor', d.floor(fx), { prepare });
      const load = loadavg();
      const ms = { ...measure([floor, subject]), load };
      rows.push({
        load: ms.load,
        dimension,
        factor: k,
        size: d.size(k),
        ms: ms.envhook,
        floorMs: ms.floor,
        cpu: ms.cpu.envhook,
        floorCpu: ms.cpu.floor,
        rss: peakRss(subject),
        floorRss: peakRss(floor),
      });
    }
  }
  return rows;
}
