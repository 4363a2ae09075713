#!/usr/bin/env bash
# Installs what weft needs to build and test on Debian 12 (and Ubuntu):
#   build-essential cmake ninja-build pkg-config libcmocka-dev
#   libutf8proc-dev
#                  Unicode's general categories for the decode example's
#                  tokenizer (examples/decode: which characters are
#                  letters, numbers or spaces when words are split); the
#                  examples do not configure without it
# and, when the distribution has them, the optional dependencies:
#   libhwloc-dev   CPU topology (cores, caches, NUMA) for local-task; without
#                  it weft reads Linux sysfs instead
#   liburing-dev   the proactor's io_uring backend (asynchronous file I/O);
#                  without it weft reads and writes files on a thread pool
#   libcjson-dev   the weft-trace tool (it reads traces with cJSON) and the
#                  tracing tests; without it weft-trace is not built
#   libbenchmark-dev, libpthreadpool-dev
#                  weft_bench (Google Benchmark) and its pthreadpool baseline;
#                  without them the benchmarks are not built
#   python3-numpy  the .npy interop test and the Python package's tests;
#                  without it they are skipped
#   python3-dev, python3-pytest, libdlpack-dev
#                  the Python package (python/: the weft._weft extension
#                  needs Python's headers; DLPack's header for tensors
#                  handed to other frameworks) and its pytest suite;
#                  without them the package, its DLPack export or its
#                  tests are not built
#   liblua5.4-dev  the VmLoop benchmark's Lua baseline; without it that
#                  row is not built
#   openmpi-bin, libopenmpi-dev
#                  libweft_mpi (channels over MPI) and its tests, run
#                  through mpiexec; without them they are not built
#   libvulkan-dev, mesa-vulkan-drivers, vulkan-validationlayers, glslang-tools
#                  the vulkan driver (built against Vulkan's headers, the
#                  loader dlopened at run time) and its CTS on Mesa's
#                  software device with validation on, the test kernels
#                  compiled from GLSL (glslang-tools brings spirv-tools,
#                  whose spirv-opt, spirv-link and spirv-val the build
#                  uses too); without them the driver is not built and
#                  its tests are not registered, and without glslang the
#                  suites that dispatch are left out for vulkan
#   clang-14, libclang-rt-14-dev
#                  the VM's libFuzzer targets (tests/vm/fuzz_*.c), which
#                  .ci/run builds in build/fuzz; without them they are not
#                  built
# The cuda driver needs the CUDA toolkit's headers (cuda.h, and nvcc for the
# CTS's CUDA kernels), which are not Debian packages: it is built when
# /usr/local/cuda (or CUDA_PATH) has them and left out otherwise; nothing
# here installs them.
# Only missing packages are installed (checked with dpkg -s, so this takes
# well under a second when everything is present); apt-get update runs only
# when something is missing. A missing optional package that cannot be
# installed is reported and is not an error. Run as root, or as a user with
# sudo.
set -euo pipefail

packages=(build-essential cmake ninja-build pkg-config libcmocka-dev
          libutf8proc-dev)
optional_packages=(libhwloc-dev liburing-dev libcjson-dev libbenchmark-dev
                   libpthreadpool-dev python3-numpy python3-dev python3-pytest
                   libdlpack-dev
                   liblua5.4-dev
                   openmpi-bin libopenmpi-dev libvulkan-dev
                   mesa-vulkan-drivers vulkan-validationlayers glslang-tools
                   clang-14 libclang-rt-14-dev)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg -s "$package" >/dev/null 2>&1; then
    missing+=("$package")
  fi
done
missing_optional=()
for package in "${optional_packages[@]}"; do
  if ! dpkg -s "$package" >/dev/null 2>&1; then
    missing_optional+=("$package")
  fi
done

if [ "${#missing[@]}" -eq 0 ] && [ "${#missing_optional[@]}" -eq 0 ]; then
  echo "install-deps: all present (${packages[*]} ${optional_packages[*]})"
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
  elif [ "${#missing[@]}" -eq 0 ]; then
    echo "install-deps: optional ${missing_optional[*]} missing (run as root" \
         "to install); weft builds without it"
    exit 0
  else
    echo "install-deps: missing ${missing[*]}; run as root to install" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
updated=false
if [ "${#missing[@]}" -ne 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  "${sudo[@]}" apt-get update
  updated=true
  "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi

if [ "${#missing_optional[@]}" -ne 0 ]; then
  if [ "$updated" = false ]; then
    "${sudo[@]}" apt-get update || true
  fi
  for package in "${missing_optional[@]}"; do
    if apt-cache show "$package" >/dev/null 2>&1 &&
       "${sudo[@]}" apt-get install -y --no-install-recommends "$package"; then
      echo "install-deps: installed optional $package"
    else
      echo "install-deps: optional $package is not available; weft builds" \
           "without it"
    fi
  done
fi
echo "install-deps: done"
