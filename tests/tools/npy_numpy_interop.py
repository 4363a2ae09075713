#!/usr/bin/env python3
"""NumPy interop for weft_npy (tools/npy), driven through npy_roundtrip.

  python3 npy_numpy_interop.py PATH/TO/npy_roundtrip

For every dtype weft has:
  - NumPy writes arrays (rank 0 to 4, empty ones, a > 64 KiB one, NaNs,
    infinities and full-range integers; header versions 1.0, 2.0 and 3.0),
    npy_roundtrip copies each with weft's reader and writer (through files
    and through memory), and NumPy must read back exactly what it wrote:
    the same dtype, shape and bytes;
  - npy_roundtrip writes its deterministic array (see npy_roundtrip.c), and
    NumPy must load it with the right dtype, shape and values, from a
    version 1.0 header whose data starts at a multiple of 64 bytes.
Files NumPy writes that weft does not read (Fortran order, big-endian,
complex) must be refused with a message naming the file and the reason.

Exits 77 (ctest's SKIP_RETURN_CODE) when NumPy cannot be imported.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError as error:
    print(f"SKIP: numpy is not available ({error}); Debian: python3-numpy")
    sys.exit(77)

# weft's dtype names and NumPy's dtypes, little-endian.
DTYPES = {
    "f16": np.dtype("<f2"),
    "f32": np.dtype("<f4"),
    "f64": np.dtype("<f8"),
    "i8": np.dtype("i1"),
    "i16": np.dtype("<i2"),
    "i32": np.dtype("<i4"),
    "i64": np.dtype("<i8"),
    "u8": np.dtype("u1"),
    "u16": np.dtype("<u2"),
    "u32": np.dtype("<u4"),
    "u64": np.dtype("<u8"),
    "bool": np.dtype("|b1"),
}

SHAPES = [(), (0,), (1,), (7,), (2, 3), (2, 3, 4), (3, 0, 2), (2, 1, 3, 2)]
# More than 64 KiB of data behind a normal (version 1.0) header.
LARGE_SHAPE = (300, 257)

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print(f"FAIL: {what}")


def sample(dtype, shape, rng):
    """An array of |dtype| with values across the type's range."""
    count = int(np.prod(shape, dtype=np.int64))
    if dtype.kind == "b":
        values = rng.integers(0, 2, size=count).astype(bool)
    elif dtype.kind == "f":
        values = (rng.standard_normal(count) * 1000).astype(dtype)
        specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0,
                             np.finfo(dtype).tiny, np.finfo(dtype).max,
                             np.finfo(dtype).min], dtype=dtype)
        n = min(count, len(specials))
        values[:n] = specials[:n]
    else:
        info = np.iinfo(dtype)
        values = rng.integers(info.min, info.max, size=count, dtype=dtype,
                              endpoint=True)
        extremes = np.array([info.min, info.max, 0], dtype=dtype)
        n = min(count, len(extremes))
        values[:n] = extremes[:n]
    return values.reshape(shape)


def expected_generated(dtype, shape):
    """The array npy_roundtrip generate writes (npy_roundtrip.c)."""
    count = int(np.prod(shape, dtype=np.int64))
    mask = (1 << 64) - 1
    xs = [(i * 0x9E3779B97F4A7C15 + 0x0123456789ABCDEF) & mask
          for i in range(count)]
    if dtype.kind == "b":
        values = np.array([(x >> 32) & 1 for x in xs], dtype=bool)
    elif dtype.kind == "f":
        values = np.array([(((x >> 40) % 2001) - 1000) / 8 for x in xs],
                          dtype=dtype)
    else:
        bits = dtype.itemsize * 8
        unsigned = np.array([x & ((1 << bits) - 1) for x in xs],
                            dtype=f"<u{dtype.itemsize}")
        values = unsigned.view(dtype)
    return values.reshape(shape)


def helper(*args):
    return subprocess.run([HELPER, *args], capture_output=True, text=True)


def header_info(path):
    """(version, data offset) of a .npy file."""
    with open(path, "rb") as file:
        version = np.lib.format.read_magic(file)
        if version == (1, 0):
            np.lib.format.read_array_header_1_0(file)
        else:
            np.lib.format.read_array_header_2_0(file)
        return version, file.tell()


def same(loaded, original, what):
    check(loaded.dtype == original.dtype,
          f"{what}: dtype {loaded.dtype} != {original.dtype}")
    check(loaded.shape == original.shape,
          f"{what}: shape {loaded.shape} != {original.shape}")
    check(loaded.tobytes() == original.tobytes(), f"{what}: bytes differ")


def numpy_to_weft_and_back(directory, name, dtype, shape, rng, version):
    original = sample(dtype, shape, rng)
    source = os.path.join(directory, "numpy.npy")
    if version is None:
        np.save(source, original)
    else:
        with open(source, "wb") as file:
            np.lib.format.write_array(file, original, version=version)
    for mode in ("copy", "copy-memory"):
        what = f"{name} {shape} v{version or '(np.save)'} {mode}"
        target = os.path.join(directory, "weft.npy")
        result = helper(mode, source, target)
        check(result.returncode == 0, f"{what}: {result.stderr.strip()}")
        if result.returncode != 0:
            continue
        same(np.load(target), original, what)
        header_version, data_offset = header_info(target)
        check(header_version == (1, 0), f"{what}: version {header_version}")
        check(data_offset % 64 == 0, f"{what}: data at {data_offset}")


def weft_to_numpy(directory, name, dtype, shape):
    what = f"generate {name} {shape}"
    target = os.path.join(directory, "generated.npy")
    result = helper("generate", name, target, *map(str, shape))
    check(result.returncode == 0, f"{what}: {result.stderr.strip()}")
    if result.returncode != 0:
        return
    same(np.load(target), expected_generated(dtype, shape), what)
    header_version, data_offset = header_info(target)
    check(header_version == (1, 0), f"{what}: version {header_version}")
    check(data_offset % 64 == 0, f"{what}: data at {data_offset}")
    with open(target, "rb") as file:
        header = file.read(data_offset)
    check(header.endswith(b"\n"), f"{what}: the header does not end in \\n")


def refused(directory, array, expected, what):
    source = os.path.join(directory, "refused.npy")
    np.save(source, array)
    result = helper("copy", source, os.path.join(directory, "never.npy"))
    check(result.returncode == 1, f"{what}: exit {result.returncode}")
    message = result.stderr
    check(f"'{source}'" in message and expected in message,
          f"{what}: message {message.strip()!r} lacks '{source}' or "
          f"{expected!r}")


def main():
    rng = np.random.default_rng(20240612)
    with tempfile.TemporaryDirectory(prefix="weft_npy_interop.") as directory:
        for name, dtype in DTYPES.items():
            for shape in SHAPES:
                numpy_to_weft_and_back(directory, name, dtype, shape, rng, None)
                weft_to_numpy(directory, name, dtype, shape)
            for version in ((1, 0), (2, 0), (3, 0)):
                numpy_to_weft_and_back(directory, name, dtype, (3, 2), rng,
                                       version)
            numpy_to_weft_and_back(directory, name, dtype, LARGE_SHAPE, rng,
                                   None)
            weft_to_numpy(directory, name, dtype, LARGE_SHAPE)
        refused(directory, np.asfortranarray(np.zeros((3, 4), "<f4")),
                "Fortran order is not supported", "Fortran order")
        refused(directory, np.zeros((3,), ">f4"),
                "dtype '>f4' is big-endian", "big-endian")
        refused(directory, np.zeros((3,), "<c8"),
                "dtype '<c8' (complex) is not supported", "complex")
        refused(directory, np.zeros((2,), [("a", "<f4"), ("b", "<i4")]),
                "structured dtypes are not supported", "structured")
        # Fortran order over one long dimension lays out the bytes of C
        # order: accepted (np.save never writes it; NumPy's header writer
        # does).
        column = np.arange(5, dtype="<i4").reshape(5, 1)
        numpy_fortran = os.path.join(directory, "column.npy")
        with open(numpy_fortran, "wb") as file:
            np.lib.format.write_array_header_1_0(
                file, {"descr": "<i4", "fortran_order": True, "shape": (5, 1)})
            file.write(column.tobytes())
        check(np.load(numpy_fortran).flags.f_contiguous,
              "column: NumPy did not load it in Fortran order")
        weft_copy = os.path.join(directory, "column_weft.npy")
        result = helper("copy", numpy_fortran, weft_copy)
        check(result.returncode == 0, f"column: {result.stderr.strip()}")
        if result.returncode == 0:
            same(np.load(weft_copy), column, "column")
    if failures:
        print(f"{len(failures)} failures")
        return 1
    print(f"OK: {len(DTYPES)} dtypes, {len(SHAPES) + 1} shapes each, "
          "NumPy -> weft -> NumPy and weft -> NumPy")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("Usage: npy_numpy_interop.py PATH/TO/npy_roundtrip",
              file=sys.stderr)
        sys.exit(2)
    HELPER = sys.argv[1]
    sys.exit(main())
