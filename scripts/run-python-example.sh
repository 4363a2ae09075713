#!/usr/bin/env bash
# The Python quick start: installs the dependencies (python3-dev,
# python3-numpy and the rest of scripts/install-deps.sh), builds weft with
# the `release` preset, installs it and its Python package into the user's
# prefix (~/.local: libweft under ~/.local/lib, the package in the user
# site, where `python3` finds it without PYTHONPATH), then runs the MLP from
# Python with NumPy inputs checked against NumPy, and 1,000 pipelines on
# one asyncio loop. build/release keeps its default Python folder
# afterwards (the user site is set for this install only):
#   ./scripts/run-python-example.sh [DEVICE]
set -euo pipefail
cd "$(dirname "$0")/.."

device="${1:-local-task}"
./scripts/install-deps.sh
python=/usr/bin/python3
prefix="$HOME/.local"
site=$("$python" -m site --user-site)
case "$site" in
  "$prefix"/*) ;;
  *) echo "run-python-example: the user site $site is not under $prefix" >&2
     exit 1 ;;
esac
cmake --preset release -DPython3_EXECUTABLE="$python" \
  -DWEFT_INSTALL_PYTHONDIR="${site#"$prefix"/}"
cmake --build --preset release -j "${JOBS:-$(nproc)}" \
  --target weft_installable weft_example_mlp_kernels
cmake --install build/release --prefix "$prefix"
# The user site is this install's choice only: build/release goes back to
# the default (dist-packages, where Debian's python3 looks under a system
# prefix), so a later `cmake --install build/release --prefix P` puts the
# package where the README says.
cmake -U WEFT_INSTALL_PYTHONDIR build/release >/dev/null
if ! grep -q '^WEFT_INSTALL_PYTHONDIR:STRING=.*/dist-packages$' \
     build/release/CMakeCache.txt; then
  echo "run-python-example: build/release did not go back to dist-packages" >&2
  exit 1
fi
cd /tmp  # the installed package, not the source tree's
"$python" -c "import weft; print('weft from', weft.__file__)"
"$python" "$OLDPWD/examples/python/mlp.py" --device "$device" \
  --kernels "$OLDPWD/build/release/examples/libmlp_kernels.so"
"$python" "$OLDPWD/examples/python/pipelines.py" --device "$device"
