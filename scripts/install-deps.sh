#!/usr/bin/env bash
# Installs what weft needs to build and test on Debian 12 (and Ubuntu):
#   build-essential cmake ninja-build pkg-config libcmocka-dev
# Only missing packages are installed (checked with dpkg -s, so this takes
# well under a second when everything is present); apt-get update runs only
# when something is missing. Run as root, or as a user with sudo.
# Optional packages are installed when the distribution has them; without
# one the build turns the matching feature off with a message.
set -euo pipefail

packages=(build-essential cmake ninja-build pkg-config libcmocka-dev)
# Optional dependencies (the OpenMP baselines need only gcc's libgomp, which
# build-essential brings):
#   libbenchmark-dev    Google Benchmark: bench/weft_bench (docs/PERFORMANCE.md)
#   libpthreadpool-dev  the pthreadpool baselines in weft_bench
optional_packages=(libbenchmark-dev libpthreadpool-dev)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg -s "$package" >/dev/null 2>&1; then
    missing+=("$package")
  fi
done

optional_missing=()
for package in "${optional_packages[@]}"; do
  if ! dpkg -s "$package" >/dev/null 2>&1; then
    optional_missing+=("$package")
  fi
done

if [ "${#missing[@]}" -eq 0 ] && [ "${#optional_missing[@]}" -eq 0 ]; then
  echo "install-deps: all present (${packages[*]} ${optional_packages[*]})"
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
  elif [ "${#missing[@]}" -eq 0 ]; then
    echo "install-deps: optional ${optional_missing[*]} missing (not root;" \
         "the features that need them are skipped)" >&2
    exit 0
  else
    echo "install-deps: missing ${missing[*]}; run as root to install" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
if ! "${sudo[@]}" apt-get update; then
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "install-deps: apt-get update failed; cannot install ${missing[*]}" >&2
    exit 1
  fi
  echo "install-deps: apt-get update failed; optional" \
       "${optional_missing[*]} skipped" >&2
  exit 0
fi
if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi
for package in "${optional_missing[@]}"; do
  if apt-cache show "$package" >/dev/null 2>&1 &&
     "${sudo[@]}" apt-get install -y --no-install-recommends "$package"; then
    echo "install-deps: installed optional $package"
  else
    echo "install-deps: optional $package not available; skipping it" >&2
  fi
done
echo "install-deps: done"
