#!/usr/bin/env bash
# Builds the real cosign CLI (github.com/sigstore/cosign/v2) that the signing tests sign images
# with, from its Go module through the Go module proxy, into a cache outside the repo. Reuses the
# binary when present. Go is a build tool for this test tier only; Ferry itself never needs it.
# Usage: build-cosign.sh  (prints the binary path on its last line); build-cosign.sh --check
set -euo pipefail

COSIGN_VERSION="${FERRY_COSIGN_VERSION:-v2.6.5}"
CACHE_ROOT="${FERRY_COSIGN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ferry/cosign}"
OUT="$CACHE_ROOT/$COSIGN_VERSION"

# --check: print the binary's path when it is built, nothing otherwise; never builds.
if [ "${1:-}" = "--check" ]; then
  [ -x "$OUT/cosign" ] && echo "$OUT/cosign"
  exit 0
fi

if [ -x "$OUT/cosign" ]; then
  echo "cosign: reusing $OUT/cosign ($COSIGN_VERSION)" >&2
  echo "$OUT/cosign"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "cosign: 'go' is not on PATH; the signing tests build cosign with Go (https://go.dev/doc/install)" >&2
  exit 1
fi

mkdir -p "$OUT"
start=$(date +%s)
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0
echo "cosign: building $COSIGN_VERSION" >&2
GOBIN="$OUT" go install -trimpath -ldflags "-s -w" "github.com/sigstore/cosign/v2/cmd/cosign@$COSIGN_VERSION" >&2
echo "cosign: built $OUT/cosign in $(( $(date +%s) - start )) s" >&2
echo "$OUT/cosign"
