#!/usr/bin/env bash
# Builds the official Node 24 image's stand-in, docker.io/library/node:24-bookworm-slim, on a machine that reaches
# Debian's mirror and the npm registry but no container registry: Debian bookworm's minimal root from Debian's
# packages (mmdebstrap), the Node of the `node` npm package this repository pins, npm from the npm registry, and the
# `node` user (uid 1000) the official image has. The Containerfile then builds with --pull=never, unchanged from where
# the official image can be pulled. Does nothing when an image of that name is already there.
set -euo pipefail
cd "$(dirname "$0")/../.."
tag=docker.io/library/node:24-bookworm-slim
if podman image exists "$tag"; then exit 0; fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# minbase, without documentation or translations, as the -slim images are.
mmdebstrap --quiet --variant=minbase --include=ca-certificates \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-exclude=/usr/share/info/*' \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
  bookworm "$work/rootfs.tar" http://deb.debian.org/debian
podman import --quiet "$work/rootfs.tar" docker.io/library/debian:bookworm-slim >/dev/null
cp node_modules/node/bin/node "$work/node"
(cd "$work" && npm pack --silent npm@11 >/dev/null && mv npm-*.tgz npm.tgz)
cat >"$work/Containerfile" <<'CONTAINERFILE'
FROM docker.io/library/debian:bookworm-slim
COPY node /usr/local/bin/node
COPY npm.tgz /tmp/npm.tgz
RUN mkdir -p /usr/local/lib/node_modules/npm \
 && tar -xzf /tmp/npm.tgz -C /usr/local/lib/node_modules/npm --strip-components=1 \
 && rm /tmp/npm.tgz \
 && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node
CMD ["node"]
CONTAINERFILE
podman --runtime runc build --quiet --pull=never --ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=4096:4096 \
  --tag "$tag" "$work" >/dev/null
echo "built $tag"
