"""A GPU driver's kernels from Python: SPIR-V on the vulkan driver (Mesa's
software device in CI), the CTS's kernels."""
import os

import numpy as np
import pytest

import weft

SPIRV = os.environ.get("WEFT_CTS_SPIRV", "")
TABLE = [("scale_offset", 2, 3, (64, 1, 1)), ("abs_range", 1, 2, (64, 1, 1)),
         ("write_ids", 1, 0, (1, 1, 1)), ("fail", 0, 1, (1, 1, 1))]


@pytest.fixture
def vulkan():
    if not SPIRV or "vulkan" not in dict(weft.drivers()):
        pytest.skip("no vulkan driver or no SPIR-V test kernels")
    try:
        device = weft.Device("vulkan")
    except weft.UnavailableError as error:
        pytest.skip(f"no Vulkan device: {error}")
    with device:
        yield device


def test_spirv_kernels_run_on_vulkan(vulkan):
    with open(SPIRV, "rb") as f:
        data = f.read()
    executable = vulkan.executable_gpu("spirv", data, TABLE, name="cts")
    assert [k[0] for k in executable.kernels] == [t[0] for t in TABLE]
    source = weft.Tensor.from_numpy(np.arange(100, dtype=np.float32), vulkan)
    out = weft.Tensor(vulkan.allocate(400), np.float32, (100,))
    done = weft.Semaphore()
    constants = np.array([2.0, 0.5], np.float32).view(np.uint32).tolist()
    vulkan.dispatch(executable, "scale_offset", 2, constants + [100],
                    [source, out], signal=[(done, 1)])
    done.wait(1, timeout=60)
    # Mesa's device memory is host-visible: read it in place.
    assert out.buffer.host_visible
    np.testing.assert_array_equal(
        out.numpy(), np.arange(100, dtype=np.float32) * 2.0 + 0.5)


def test_a_gpu_kernel_failure_reaches_python(vulkan):
    with open(SPIRV, "rb") as f:
        executable = vulkan.executable_gpu("spirv", f.read(), TABLE)
    done = weft.Semaphore()
    # The kernel fails in the workgroup its constant names: 2 of 4.
    vulkan.dispatch(executable, "fail", 4, [2], signal=[(done, 1)])
    with pytest.raises(weft.Error, match=r"kernel 'fail' .*failed in "
                                         r"workgroup \(2, 0, 0\) with code 1"):
        done.wait(1, timeout=60)


def test_bad_gpu_executables_are_clear_errors(vulkan):
    with pytest.raises(ValueError, match="format must be"):
        vulkan.executable_gpu("metal", b"", [])
    with pytest.raises(TypeError, match=r"kernels\[0\] must be"):
        vulkan.executable_gpu("spirv", b"\x00" * 8, [("x", 1)])
    with pytest.raises(weft.InvalidArgumentError):
        vulkan.executable_gpu("spirv", b"\x00" * 8, TABLE)
