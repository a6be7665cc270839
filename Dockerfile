# envhook's image: the single executable, the sh runtime front and the hooks.d templates. Its
# entrypoint installs them onto the host filesystem mounted at /host and registers them with the
# node's runtime (the DaemonSet pattern: examples/daemonset.yaml); examples/nri-daemonset.yaml
# runs `envhook nri` from it instead.
#   docker build -t envhook:0.1.0 .
#   docker run --rm -v /:/host envhook:0.1.0 --runtime containerd --dry-run
# Without a registry (no base image to pull): Containerfile.scratch, the same files at the same
# paths and the same entrypoint (test/scripts/image-context.test.ts), built and run by the suite
# (test/e2e/image.test.ts). The final stage's files are scripts/image-context.ts's IMAGE_FILES.

FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# dist/envhook: a Node single executable (no Node needed on the node)
RUN npm run build && npm run build:sea

FROM debian:bookworm-slim
# The layout `envhook install` looks for next to its own executable: dist/ and hooks/.
COPY --from=build /src/dist/envhook /opt/envhook/dist/envhook
COPY --from=build /src/hooks/envhook-runtime /src/hooks/envhook-precreate.json /src/hooks/envhook-createruntime.json /opt/envhook/hooks/
ENTRYPOINT ["/opt/envhook/dist/envhook", "install", "--root", "/host"]
CMD ["--runtime", "containerd"]
