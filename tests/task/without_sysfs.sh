#!/bin/sh
# Runs a command as it would run in a container without sysfs: in a mount
# namespace of its own, with an empty tmpfs over /sys (the machine's own
# mounts are not touched). Exits 77, ctest's SKIP_RETURN_CODE, saying why,
# where no such namespace can be made (no unshare(1); neither root nor
# unprivileged user namespaces).
#   without_sysfs.sh COMMAND [ARG...]
set -u
if ! command -v unshare >/dev/null 2>&1; then
  echo "skipped: no unshare(1) to make a mount namespace with"
  exit 77
fi
# Root needs only a mount namespace; anyone else a user namespace too,
# where they are root.
for flags in "--mount" "--mount --map-root-user"; do
  # shellcheck disable=SC2086 # the flags are words
  if unshare $flags sh -c 'mount -t tmpfs weft-no-sysfs /sys' 2>/dev/null; then
    # shellcheck disable=SC2086,SC2016 # $@ is expanded by the inner sh
    exec unshare $flags sh -c \
      'mount -t tmpfs weft-no-sysfs /sys && exec "$@"' without_sysfs "$@"
  fi
done
echo "skipped: cannot mount over /sys in a namespace of its own (needs root" \
     "or unprivileged user namespaces)"
exit 77
