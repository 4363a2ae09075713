"""weft.Tensor: typed views of buffers, NumPy and DLPack without copies."""
import gc
import os

import numpy as np
import pytest

import weft
from weft import _weft


def test_a_tensor_shares_memory_with_numpy(device):
    source = np.arange(12, dtype=np.float32).reshape(3, 4)
    tensor = weft.Tensor.from_numpy(source, device)
    assert tensor.shape == (3, 4) and tensor.element_type == "f32"
    assert "3x4 f32" in repr(tensor)
    first = tensor.numpy()
    second = np.asarray(tensor)
    assert first.ctypes.data == second.ctypes.data
    np.testing.assert_array_equal(first, source)
    # A write through NumPy is the device's: a device copy sees it.
    first[1, 2] = -1.0
    out = device.allocate(tensor.nbytes)
    done = weft.Semaphore()
    device.copy(tensor.buffer, out, signal=[(done, 1)])
    done.wait(1, timeout=10)
    assert weft.as_array(out, np.float32)[6] == -1.0
    del first, second


def test_dlpack_hands_the_memory_over_without_a_copy(device):
    tensor = weft.Tensor.from_numpy(np.arange(6, dtype=np.int16), device)
    assert tensor.__dlpack_device__() == (1, 0)
    taken = np.from_dlpack(tensor)
    assert taken.dtype == np.int16 and taken.shape == (6,)
    assert taken.ctypes.data == tensor.numpy().ctypes.data
    # NumPy marks what it takes by DLPack read-only; a write through the
    # tensor shows in it, the same memory.
    tensor.numpy()[0] = 99
    assert taken[0] == 99
    # The consumer's array keeps the buffer mapped: close refuses.
    with pytest.raises(BufferError, match="still alive"):
        tensor.buffer.close()
    del taken
    gc.collect()
    tensor.buffer.close()


def test_a_tensor_at_an_offset_and_every_element_type(device):
    buffer = device.allocate(64)
    for dtype in (np.float16, np.float32, np.float64, np.int8, np.int16,
                  np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                  np.uint64):
        tensor = weft.Tensor(buffer, dtype, (2,), byte_offset=8)
        tensor.numpy()[:] = 3
        taken = np.from_dlpack(tensor)
        assert taken.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(taken, np.full(2, 3, dtype=dtype))
        del taken
    with pytest.raises(ValueError, match="do not fit the buffer's 64"):
        weft.Tensor(buffer, np.float64, (8,), byte_offset=8)
    with pytest.raises(TypeError, match="no weft element type"):
        weft.Tensor(buffer, np.complex64, (2,))


def test_from_dlpack_copies_onto_a_device(device):
    source = np.linspace(0, 1, 5, dtype=np.float64)
    tensor = weft.from_dlpack(source, device)
    assert tensor.shape == (5,) and tensor.element_type == "f64"
    np.testing.assert_array_equal(tensor.numpy(), source)
    assert tensor.numpy().ctypes.data != source.ctypes.data


def test_tensors_free_everything():
    gc.collect()
    before = _weft._live_allocations()
    with weft.Device("local-sync") as device:
        tensor = weft.Tensor.from_numpy(np.ones(4, dtype=np.float32), device)
        taken = np.from_dlpack(tensor)
        assert taken.sum() == 4
        del taken, tensor
    gc.collect()
    assert _weft._live_allocations() == before


MLP_KERNELS = os.environ.get("WEFT_MLP_KERNELS", "")


@pytest.mark.skipif(not MLP_KERNELS, reason="no MLP kernels")
def test_a_program_takes_tensors_where_they_are(device):
    program = weft.Program(
        os.path.join(os.environ["WEFT_SOURCE_DIR"], "examples", "mlp",
                     "mlp.wvm"), device, kernels={"kernels": MLP_KERNELS})
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(shape).astype(np.float32)
              for shape in ((8,), (8, 4), (4,), (4, 2), (2,))]
    tensors = [weft.Tensor.from_numpy(a, device) for a in arrays]
    x, w1, b1, w2, b2 = arrays
    expected = np.maximum(x @ w1 + b1, 0) @ w2 + b2
    np.testing.assert_allclose(program.forward(*tensors), expected,
                               rtol=1e-4, atol=1e-4)
    # Device-local tensors too, where they are (the result copied out).
    local = [weft.Tensor.from_numpy(a, device, host_visible=False)
             for a in arrays]
    np.testing.assert_allclose(program.forward(*local), expected,
                               rtol=1e-4, atol=1e-4)
    # Mixed with plain arrays, and checked all the same.
    with pytest.raises(weft.InvalidArgumentError, match="'w1'"):
        program.forward(tensors[0], arrays[1].T, *tensors[2:])
    program.close()


def test_a_shape_that_cannot_be_is_refused(device):
    buffer = device.allocate(16)
    # Once accepted: numpy() then made 4 elements, DLPack failed later.
    with pytest.raises(ValueError, match=r"'shape\[0\]' is -1"):
        weft.Tensor(buffer, np.float32, (-1,))
    with pytest.raises(ValueError, match=r"'shape\[1\]' is -2"):
        weft.Tensor(buffer, np.float32, (2, -2))
    with pytest.raises(OverflowError, match=r"'shape\[0\]' must be an i64"):
        weft.Tensor(buffer, np.float32, (2**64,))
    # Bytes past the buffer, however large: the dimension that passes it
    # is named.
    with pytest.raises(ValueError, match=r"do not fit the buffer's 16 .*"
                                         r"shape\[1\] = 4294967296"):
        weft.Tensor(buffer, np.float32, (2, 2**32, 2**32))
    with pytest.raises(ValueError, match="do not fit"):
        weft.Tensor(buffer, np.float32, (2,), byte_offset=12)
    with pytest.raises(ValueError, match="do not fit"):
        weft.Tensor(buffer, np.float32, (1,), byte_offset=2**63)
    tensor = weft.Tensor(buffer, np.float32, (np.int64(2), 2))
    assert tensor.shape == (2, 2) and tensor.nbytes == 16
    assert weft.Tensor(buffer, np.float32, (0, 2**40)).nbytes == 0


def test_a_dlpack_shape_whose_size_wraps_is_refused(device):
    # 4 * 2**62 * 8 bytes is 0 modulo 2**64: it once "fit" 16 bytes.
    buffer = device.allocate(16)
    with pytest.raises(ValueError, match="past 2\\*\\*64"):
        _weft.dlpack_capsule(buffer, "f32", (2**62, 8), 0)
    with pytest.raises(ValueError, match=r"'shape\[0\]' is -1"):
        _weft.dlpack_capsule(buffer, "f32", (-1,), 0)


def test_a_0d_array_keeps_its_shape(device):
    tensor = weft.Tensor.from_numpy(np.float32(3), device)
    assert tensor.shape == () and tensor.nbytes == 4
    assert "scalar f32" in repr(tensor)
    array = tensor.numpy()
    assert array.shape == () and array == 3
    taken = np.from_dlpack(tensor)
    assert taken.shape == () and taken.dtype == np.float32 and taken == 3
    del taken
    local = weft.Tensor.from_numpy(np.array(7, dtype=np.int32), device,
                                   host_visible=False)
    assert local.shape == () and local.numpy() == 7
