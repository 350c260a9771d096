#!/usr/bin/env bash
# Builds the pinned OpenZiti programs the interop tests and the bench use — the `ziti` CLI and
# weft-sdk-client (test/interop/sdkclient, on github.com/openziti/sdk-golang) — from the Go module proxy
# into a cache folder that later runs reuse. The pinned versions are those of test/interop/go.mod/go.sum;
# nothing from OpenZiti is kept in this repository.
#
#   scripts/openziti-tools.sh          build when missing or stale, print the folder
#   WEFT_OPENZITI_DIR=DIR              build into DIR instead of ~/.cache/weft/openziti
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
mod="$root/test/interop"
dir="${WEFT_OPENZITI_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/weft/openziti}"
stamp="$(node "$root/scripts/openziti-stamp.mjs")"

if [ -x "$dir/ziti" ] && [ -x "$dir/weft-sdk-client" ] && [ "$(cat "$dir/stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "$dir"
  exit 0
fi
command -v go >/dev/null || { echo "openziti-tools: Go is required (https://go.dev/dl)" >&2; exit 1; }
mkdir -p "$dir"
zver="$(cd "$mod" && go list -m -f '{{.Version}}' github.com/openziti/ziti)"
cd "$mod"
# go.sum pins every module; its hashes were recorded from the Go module proxy, so the checksum
# database is not consulted (it has no entries for some OpenZiti modules).
export GOFLAGS=-buildvcs=false GOSUMDB=off
echo "openziti-tools: building ziti $zver and weft-sdk-client into $dir" >&2
go build -trimpath -ldflags "-s -w -X github.com/openziti/ziti/common/version.Version=$zver" -o "$dir/ziti" github.com/openziti/ziti/ziti
go build -trimpath -ldflags "-s -w" -o "$dir/weft-sdk-client" ./sdkclient
echo "$stamp" > "$dir/stamp"
echo "$dir"
