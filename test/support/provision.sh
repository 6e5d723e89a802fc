#!/usr/bin/env bash
# Provisions the real tools the test suite runs, then runs the command it is given with them on PATH:
# `npm test` is `bash test/support/provision.sh vitest run`, and `.ci/run` calls it the same way, so
# the README's `npm ci && npm test` is all a new machine needs (docs/testing.md "Prerequisites").
#
# - Node: the image's LTS (test/support/node-lts.sh) when the machine's is older than 22.19.
# - kustomize (only when neither kubectl nor kustomize is on PATH), helm, sops and age-keygen (the
#   SOPS tests' keys): built from their Go modules, at the versions src/adapters/render/render-tools.ts pins,
#   into ~/.cache/ferry/ (no root).
# - CNCF distribution (Debian's docker-registry), htpasswd (apache2-utils) and chromium: Debian's
#   packages, the only source for those builds, installed with apt-get when this runs as root; as
#   another user it names the command and stops.
# `--env` prints the `export PATH=…` line instead of running a command (for .ci/run's other tiers).
set -euo pipefail
cd "$(dirname "$0")/../.."

cache="${XDG_CACHE_HOME:-$HOME/.cache}/ferry"
# A supported Node first (the machine's may be older): vitest and every test run on it.
eval "$(bash test/support/node-lts.sh)"
pinned() { sed -n "s/^export const $1 = \"\(.*\)\";/\1/p" src/adapters/render/render-tools.ts; }
say() { echo "provision: $*" >&2; }

# Go-built tools: into the cache once, then on PATH.
go_tool() { # name version module
  local bin="$cache/$1-$2/bin"
  if [ ! -x "$bin/$1" ]; then
    if ! command -v go >/dev/null 2>&1; then
      say "$1 is not on PATH and there is no go to build it: install Go (https://go.dev/dl/) or $1 $2"
      exit 1
    fi
    say "building $1 $2 into $bin (go install $3@$2, once)"
    GOBIN="$bin" go install "$3@$2" >&2
  fi
  PATH="$bin:$PATH"
}
if ! command -v kubectl >/dev/null 2>&1 && ! command -v kustomize >/dev/null 2>&1; then
  go_tool kustomize "$(pinned PINNED_KUSTOMIZE)" sigs.k8s.io/kustomize/kustomize/v5
fi
command -v helm >/dev/null 2>&1 || go_tool helm "$(pinned PINNED_HELM)" helm.sh/helm/v3/cmd/helm
command -v sops >/dev/null 2>&1 || go_tool sops "$(pinned PINNED_SOPS)" github.com/getsops/sops/v3/cmd/sops
command -v age-keygen >/dev/null 2>&1 || go_tool age-keygen "$(pinned PINNED_AGE)" filippo.io/age/cmd/age-keygen

# Debian packages: nothing else ships these builds.
need_apt=()
[ -x "${FERRY_DISTRIBUTION_BINARY:-/usr/bin/docker-registry}" ] || need_apt+=(docker-registry)
command -v htpasswd >/dev/null 2>&1 || need_apt+=(apache2-utils)
command -v git >/dev/null 2>&1 || need_apt+=(git)
# GNU time: the bench reads the peak RSS of the reconciler and kubectl as processes of their own.
[ -x "${FERRY_GNU_TIME:-/usr/bin/time}" ] || need_apt+=(time)
[ -x "${FERRY_CHROMIUM_BINARY:-/usr/bin/chromium}" ] || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    say "the tests need ${need_apt[*]} (Debian packages); as root: apt-get install ${need_apt[*]}"
    exit 1
  fi
  say "installing ${need_apt[*]} with apt-get (Debian's packages are the only source for these)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# Git needs an identity for the emulator's and the tests' commits on a fresh machine.
git config --global user.name >/dev/null 2>&1 || git config --global user.name "Ferry tests"
git config --global user.email >/dev/null 2>&1 || git config --global user.email "tests@ferry.invalid"

export PATH
if [ "${1:-}" = "--env" ]; then
  printf 'export PATH=%q\n' "$PATH"
  exit 0
fi
[ $# -gt 0 ] || { say "usage: provision.sh --env | COMMAND [ARG...]"; exit 2; }
# npm runs scripts with node_modules/.bin on PATH, so `vitest` resolves here.
exec "$@"
