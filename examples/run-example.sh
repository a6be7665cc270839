#!/usr/bin/env bash
# The KEP-3721 story on a real runtime: an init container writes env files into an emptyDir;
# `envhook inject` puts their variables into the main container's config.json, although the main
# container does not mount the volume; `runc run` starts it and it prints what it got.
# Run as root from the repository (npm run example builds dist/ first).
set -euo pipefail
cd "$(dirname "$0")/.."
for bin in runc busybox; do
  if ! command -v "$bin" >/dev/null 2>&1 && ! [ -x "/bin/$bin" ]; then
    echo "run-example: '$bin' not found: apt-get install -y runc busybox-static" >&2
    exit 1
  fi
done
BUSYBOX=$(command -v busybox || echo /bin/busybox)
if ! file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked' && ldd "$BUSYBOX" >/dev/null 2>&1; then
  echo "run-example: $BUSYBOX is not static: apt-get install -y busybox-static" >&2
  exit 1
fi
[ "$(id -u)" = 0 ] || { echo "run-example: runc needs root" >&2; exit 1; }
NODE=node_modules/.bin/node
[ -x "$NODE" ] && [ -f dist/envhook.cjs ] || { echo "run-example: run 'npm ci && npm run build' first" >&2; exit 1; }

WORK=$(mktemp -d /tmp/envhook-example.XXXXXX)
trap 'runc --root "$WORK/runc" delete -f example-init >/dev/null 2>&1 || true; runc --root "$WORK/runc" delete -f example-main >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT

# A busybox rootfs.
mkdir -p "$WORK/rootfs/bin" "$WORK/rootfs/proc" "$WORK/rootfs/dev" "$WORK/rootfs/sys" "$WORK/rootfs/etc" "$WORK/rootfs/config"
cp "$BUSYBOX" "$WORK/rootfs/bin/busybox"
for a in sh env echo cat sort grep; do ln -s busybox "$WORK/rootfs/bin/$a"; done

# A pod directory as the kubelet lays it out, under a kubelet root of our own.
KUBELET_ROOT="$WORK/kubelet"
# make-config.mjs lays the pod directory out (scripts/kubelet-pod.ts) as it writes each bundle.
POD="$KUBELET_ROOT/pods/0e5f1f4c-5c8e-4b59-9d3a-6f0b2f6c1a11"

MAKE="$NODE examples/bundle/make-config.mjs"
# 1. The init container: mounts the emptyDir and writes the env files (KEP-3721 format).
$MAKE "$WORK/init" "$WORK/rootfs" "$POD" init examples/bundle/annotations.json config:/config -- \
  sh -c "echo \"CONFIG_VAR='HELLO'\" > /config/config.env; echo \"CONFIG_INIT='hello'\" >> /config/config.env; printf \"HOST='db.example'\nPORT='5432'\n\" > /config/db.env"
runc --root "$WORK/runc" run -b "$WORK/init" example-init
echo "init container wrote: $(ls "$POD/volumes/kubernetes.io~empty-dir/config" | tr '\n' ' ')"

# 2. The main container does not mount the emptyDir. A service variable the runtime would add
#    (removed: serviceLinks false) and the kubernetes one (kept).
$MAKE "$WORK/main" "$WORK/rootfs" "$POD" main examples/bundle/annotations.json -- sh -c 'env | sort'
sed -i 's|"HOSTNAME=example"|"HOSTNAME=example", "REDIS_SERVICE_HOST=10.0.0.11", "REDIS_PORT=tcp://10.0.0.11:6379", "KUBERNETES_SERVICE_HOST=10.0.0.1"|' "$WORK/main/config.json"

echo "--- envhook inject --dry-run (names and sources, never values)"
$NODE dist/envhook.cjs inject --bundle "$WORK/main" --kubelet-root "$KUBELET_ROOT" --dry-run
$NODE dist/envhook.cjs inject --bundle "$WORK/main" --kubelet-root "$KUBELET_ROOT"

echo "--- the main container's env"
runc --root "$WORK/runc" run -b "$WORK/main" example-main | grep -E '^(CONFIG_|DB_|GREETING|OPTIONAL_|REDIS_|KUBERNETES_)' || true
