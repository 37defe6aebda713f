#!/usr/bin/env bash
# Gathers, on a Debian 12 machine with network access, what a GPU host without a package registry
# needs to build and measure llmprof, into .device/ (git-ignored; carry it to the GPU host):
#   .device/root/usr   the build dependencies (headers and shared libraries), unpacked from
#                      Debian packages; scripts/build_gpu.sh searches it
#   .device/src/<name> sources given as NAME=PATH arguments, copied as they are (e.g. a nanoGPT
#                      checkout for the peer run, an HTA checkout for scripts/gpu/hta_check.py)
#   .device/data       the shared data the device runs read (Tiny Shakespeare, WikiText-2, the
#                      GPT-2 and BERT vocabularies), from ../shared/data: it does not travel
# Usage: scripts/gpu/prepare_device.sh [nanoGPT=/path/to/nanoGPT] [hta=/path/to/HTA]
set -euo pipefail
cd "$(dirname "$0")/../.."
packages=(libfmt-dev libfmt9 libspdlog-dev libspdlog1.10 libyaml-cpp-dev libyaml-cpp0.7
          nlohmann-json3-dev libcli11-dev libgtest-dev zlib1g-dev zlib1g
          libgloo-dev libpcre2-dev libpcre2-8-0)
mkdir -p .device/debs .device/root .device/src
(cd .device/debs && apt-get download "${packages[@]}")
for deb in .device/debs/*.deb; do dpkg -x "$deb" .device/root; done
# Absolute links (zlib1g-dev's libz.so -> /lib/...) would point outside the unpacked tree there.
find .device/root -type l -lname '/*' | while read -r link; do
  target=.device/root$(readlink "$link")
  [ -e "$target" ] && ln -sfn "$(realpath --relative-to="$(dirname "$link")" "$target")" "$link"
done
shared=../shared/data
if [ -d "$shared" ]; then
  mkdir -p .device/data/vocab .device/data/wikitext-2
  cp "$shared/tinyshakespeare.txt" .device/data/
  cp "$shared"/vocab/{gpt2-encoder.json,gpt2-vocab.bpe,bert-base-uncased-vocab.txt} .device/data/vocab/
  cp "$shared"/wikitext-2/{wiki.train.tokens.gz,wiki.valid.tokens} .device/data/wikitext-2/
else
  echo "prepare_device: no $shared: the device runs will have no data" >&2
fi
for arg in "$@"; do
  name=${arg%%=*} path=${arg#*=}
  if [ "$name" = "$arg" ] || [ ! -d "$path" ]; then
    echo "prepare_device: '$arg': expected NAME=DIRECTORY" >&2
    exit 2
  fi
  rm -rf ".device/src/$name"
  if [ -d "$path/.git" ] || git -C "$path" rev-parse --git-dir >/dev/null 2>&1; then
    mkdir -p ".device/src/$name"
    git -C "$path" archive HEAD | tar -x -C ".device/src/$name"  # the tree, without history
  else
    cp -r "$path" ".device/src/$name"
  fi
done
rm -rf .device/debs
du -sh .device | sed 's/^/prepare_device: /'
