#!/usr/bin/env bash
# Installs llmprof's build and run dependencies from Debian 12 packages (skips what is present).
# Extra package names given as arguments are installed too (scripts/test.sh adds chromium for the
# browser test of the HTML report; the quick start does not need it).
set -euo pipefail
pkgs=(cmake ninja-build g++ git libtorch-dev libopenblas0-openmp libcli11-dev nlohmann-json3-dev
      libfmt-dev libspdlog-dev libyaml-cpp-dev libgtest-dev gnuplot-nox zlib1g-dev
      libgloo-dev libpcre2-dev)
pkgs+=("$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#pkgs[@]} packages present"
  exit 0
fi
echo "install_deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q "${missing[@]}"
