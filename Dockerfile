# envhook installer image: the single executable, the sh runtime front and the hooks.d
# templates. Its entrypoint installs them onto the host filesystem mounted at /host and
# registers them with the node's runtime (the DaemonSet pattern: examples/daemonset.yaml).
#   docker build -t envhook:0.1.0 .
#   docker run --rm -v /:/host envhook:0.1.0 --runtime containerd --dry-run

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
