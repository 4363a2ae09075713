#!/usr/bin/env bash
# Installs what weft needs to build and test on Debian 12 (and Ubuntu):
#   build-essential cmake ninja-build pkg-config libcmocka-dev
# Only missing packages are installed (checked with dpkg -s, so this takes
# well under a second when everything is present); apt-get update runs only
# when something is missing. Run as root, or as a user with sudo.
set -euo pipefail

packages=(build-essential cmake ninja-build pkg-config libcmocka-dev)
# Optional dependencies: none yet.

missing=()
for package in "${packages[@]}"; do
  if ! dpkg -s "$package" >/dev/null 2>&1; then
    missing+=("$package")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all present (${packages[*]})"
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
  else
    echo "install-deps: missing ${missing[*]}; run as root to install" >&2
    exit 1
  fi
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update
"${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
echo "install-deps: done"
