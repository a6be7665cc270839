# envhook's image: the single executable, the sh runtime front and the hooks.d templates. Its
# entrypoint installs them onto the host filesystem mounted at /host and registers them with the
# node's runtime (the DaemonSet pattern: examples/daemonset.yaml); examples/nri-daemonset.yaml
# runs `envhook nri` from it instead.
#   docker build -t envhook:0.1.0 --build-arg REVISION=$(git rev-parse --short=7 HEAD) .
#   docker run --rm -v /:/host envhook:0.1.0 --runtime containerd --dry-run
# REVISION is the commit the build names (`envhook version`, the image's revision label);
# without it the build asks git (the context's .git) and the label says unknown. VERSION's
# default is package.json's version (test/scripts/image-context.test.ts keeps them equal). No
# org.opencontainers.image.source label: package.json names no repository address to give it.
# Without a registry (no base image to pull): Containerfile.scratch, the same files at the same
# paths and the same entrypoint (test/scripts/image-context.test.ts), built and run by the suite
# (test/e2e/image.test.ts). The final stage's files are scripts/image-context.ts's IMAGE_FILES.

FROM node:24-bookworm-slim AS build
ARG REVISION=
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# dist/envhook: a Node single executable (no Node needed on the node)
RUN ENVHOOK_COMMIT="$REVISION" npm run build

FROM debian:bookworm-slim
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="envhook" \
      org.opencontainers.image.version="$VERSION" \
      org.opencontainers.image.revision="$REVISION" \
      org.opencontainers.image.licenses="Apache-2.0"
# The layout `envhook install` looks for next to its own executable: dist/ and hooks/.
COPY --from=build /src/dist/envhook /opt/envhook/dist/envhook
COPY --from=build /src/hooks/envhook-runtime /src/hooks/envhook-precreate.json /src/hooks/envhook-createruntime.json /opt/envhook/hooks/
ENTRYPOINT ["/opt/envhook/dist/envhook", "install", "--root", "/host"]
CMD ["--runtime", "containerd"]
