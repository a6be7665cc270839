// The kubelet parser's own test cases (Kubernetes pkg/kubelet/util/env), restated by the team for
// a whole-file parser in test/fixtures/envfile-kubelet-cases.json. The repository carries its
// own copy so that the suite needs nothing beside the checkout.
import fs from 'node:fs';
import path from 'node:path';

export interface KubeletCase {
  name: string;
  input: string;
  key: string;
  value?: string | null;
  rejected?: boolean;
  reason?: string;
}

export const KUBELET_CASES_FILE = path.resolve(import.meta.dirname, '../fixtures/envfile-kubelet-cases.json');

export function kubeletCases(): KubeletCase[] {
  const doc = JSON.parse(fs.readFileSync(KUBELET_CASES_FILE, 'utf8')) as { cases: KubeletCase[] };
  return doc.cases;
}
