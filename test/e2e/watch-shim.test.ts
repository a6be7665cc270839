// Owned copies on a shim node: containerd 1.6's CRI plugin runs the pod through the `envhook`
// runtime handler (the sh front, the shim's create, real runc), whose create points the volumes'
// mounts at envhook's owned copies, and `envhook watch` keeps them in step with the kubelet's
// rewrites: the container never meets a file it may not read (test/e2e/copy-nri-suite.ts).
import t from 'tap';
import { copySuite } from './copy-nri-suite.ts';

t.setTimeout(900_000);
copySuite({ via: 'shim', version: '1.6' });
