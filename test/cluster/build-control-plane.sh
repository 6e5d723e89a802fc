#!/usr/bin/env bash
# Builds the real control plane the cluster tier tests against: kube-apiserver (k8s.io/kubernetes)
# and etcd (go.etcd.io/etcd/server/v3), from their Go modules through the Go module proxy, into a
# cache outside the repo. Reuses the binaries when present. Go is a build tool for this test tier
# only; Ferry itself never needs it. See docs/testing.md.
set -euo pipefail

KUBE_VERSION="${FERRY_KUBE_VERSION:-v1.34.4}"
ETCD_VERSION="${FERRY_ETCD_VERSION:-v3.6.16}"
CACHE_ROOT="${FERRY_CONTROL_PLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ferry/control-plane}"
OUT="$CACHE_ROOT/kube-$KUBE_VERSION-etcd-$ETCD_VERSION"

reuse() {
  if [ -x "$OUT/kube-apiserver" ] && [ -x "$OUT/etcd" ]; then
    echo "control plane: reusing $OUT (kube-apiserver $KUBE_VERSION, etcd $ETCD_VERSION)"
    exit 0
  fi
}
reuse
# One build at a time: a second one waits for the first (which writes into the same folder), then
# reuses what it built.
mkdir -p "$CACHE_ROOT"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$CACHE_ROOT/.build.lock"
  flock 9
  reuse
fi

if ! command -v go >/dev/null 2>&1; then
  echo "control plane: 'go' is not on PATH; the real-API-server tier builds kube-apiserver and etcd with Go 1.24 or newer (https://go.dev/doc/install)" >&2
  exit 1
fi

mkdir -p "$OUT"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0

# k8s.io/kubernetes replaces its staging modules with local paths, so `go install ...@version` is
# refused. A wrapper module requires it and points each staging module at its published v0.x twin.
staging_version="v0.${KUBE_VERSION#v1.}"
mkdir -p "$work/kube" && cd "$work/kube"
go mod init ferry.invalid/control-plane/kube >/dev/null 2>&1
go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" >"$work/kube.json"
kube_gomod="$(sed -n 's/.*"GoMod": "\(.*\)",*/\1/p' "$work/kube.json")"
{
  echo "require k8s.io/kubernetes $KUBE_VERSION"
  echo "replace ("
  sed -n 's#^\s*\(k8s\.io/[a-z0-9-]*\) => \./staging/src/.*#\t\1 => \1 '"$staging_version"'#p' "$kube_gomod"
  echo ")"
} >>go.mod
cat >tools.go <<'GO'
//go:build tools

package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
GO
echo "control plane: building kube-apiserver $KUBE_VERSION (staging modules $staging_version)"
go build -trimpath -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION" \
  -o "$OUT/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver
mv "$OUT/kube-apiserver.tmp" "$OUT/kube-apiserver"

mkdir -p "$work/etcd" && cd "$work/etcd"
go mod init ferry.invalid/control-plane/etcd >/dev/null 2>&1
echo "require go.etcd.io/etcd/server/v3 $ETCD_VERSION" >>go.mod
cat >tools.go <<'GO'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3/etcdmain"
GO
cat >main.go <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
echo "control plane: building etcd $ETCD_VERSION"
go build -trimpath -ldflags "-s -w" -o "$OUT/etcd.tmp" .
mv "$OUT/etcd.tmp" "$OUT/etcd"

echo "control plane: built $OUT in $(( $(date +%s) - start )) s"
"$OUT/kube-apiserver" --version
# The first line only, without a pipe: under pipefail `etcd --version | head -1` fails with 141
# whenever head exits before etcd has written its other lines.
etcd_version="$("$OUT/etcd" --version)"
echo "${etcd_version%%$'\n'*}"
