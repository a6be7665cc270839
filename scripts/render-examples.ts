// examples/nri-daemonset.yaml and examples/daemonset.yaml are the chart's output (charts/envhook)
// for the values written beside each below: one source, so that the examples and the chart never
// drift. `npm run render-examples` writes them with the real helm (scripts/helm-binary.ts);
// test/scripts/render-examples.test.ts fails when a file differs from what the chart renders.
// TypeScript with erasable syntax only: Node 24 runs it as it is.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { helmBinary } from './helm-binary.ts';

const REPO = path.resolve(import.meta.dirname, '..');
export const CHART = 'charts/envhook';

export interface Example {
  /** The file under the repository. */
  file: string;
  /** The chart's template it is. */
  template: string;
  /** `--set` values, as documented in docs/helm.md. */
  set: string[];
}

const IMAGE = 'image.repository=registry.example.com/envhook';
export const EXAMPLES: readonly Example[] = [
  { file: 'examples/nri-daemonset.yaml', template: 'templates/nri-daemonset.yaml', set: [IMAGE] },
  {
    file: 'examples/daemonset.yaml',
    template: 'templates/installer-daemonset.yaml',
    set: [IMAGE, 'nri.enabled=false', 'installer.enabled=true'],
  },
];

/** The helm command line that renders an example, as its header says it. */
export function commandOf(e: Example): string[] {
  return ['template', 'envhook', CHART, '--namespace', 'kube-system', ...e.set.flatMap((s) => ['--set', s]), '--show-only', e.template];
}

/** The example's text: the header, then helm's output without its `---` and `# Source:` lines. */
export function render(e: Example, helm: string = helmBinary()): string {
  const out = execFileSync(helm, commandOf(e), { cwd: REPO, encoding: 'utf8' });
  const body = out.replace(/^---\n# Source: [^\n]*\n/, '');
  const header = [
    `# Rendered from the chart (${CHART}) by \`npm run render-examples\`; edit the chart, not this file:`,
    `#   helm ${commandOf(e).join(' ')}`,
  ];
  return `${header.join('\n')}\n${body.endsWith('\n') ? body : body + '\n'}`;
}

if (import.meta.main) {
  const helm = helmBinary();
  for (const e of EXAMPLES) {
    fs.writeFileSync(path.join(REPO, e.file), render(e, helm));
    console.log(`${e.file}: written`);
  }
}
