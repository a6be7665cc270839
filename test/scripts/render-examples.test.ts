// One source: the examples are the chart's output for their documented values, rendered by the
// real helm; a file edited by hand, or a chart changed without `npm run render-examples`, fails here.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from '../helpers/bundle.ts';
import { HELM } from '../helpers/helm.ts';
import { EXAMPLES, render } from '../../scripts/render-examples.ts';

for (const e of EXAMPLES) {
  t.test(`${e.file} is what the chart renders (npm run render-examples)`, async (t) => {
    const text = render(e, HELM);
    t.match(text, /^# Rendered from the chart \(charts\/envhook\) by `npm run render-examples`/);
    t.match(text, /\napiVersion: apps\/v1\nkind: DaemonSet\n/, 'a DaemonSet, without helm\'s "# Source:" line');
    t.equal(fs.readFileSync(path.join(REPO, e.file), 'utf8'), text);
  });
}

t.test('the package.json script writes them', async (t) => {
  const scripts = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')).scripts;
  t.equal(scripts['render-examples'], 'node scripts/render-examples.ts');
});
