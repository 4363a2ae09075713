"""Executables, dispatches and command buffers from Python."""
import gc
import os

import numpy as np
import pytest

import weft
from weft import _weft

MLP_KERNELS = os.environ.get("WEFT_MLP_KERNELS", "")
pytestmark = pytest.mark.skipif(not MLP_KERNELS,
                                reason="the MLP example's kernels were not "
                                       "built")


def dense_inputs(device, k=16, n=70, seed=2):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(k).astype(np.float32)
    w = rng.standard_normal((k, n)).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    tensors = [weft.Tensor.from_numpy(a, device) for a in (x, w, b)]
    out = weft.Tensor(device.allocate(n * 4), np.float32, (n,))
    return (x, w, b), tensors, out


def test_an_executable_lists_and_finds_its_kernels(device):
    executable = device.executable(MLP_KERNELS)
    assert executable.kernels == [("dense", 4, 3)]
    assert executable.lookup("dense") == 0
    with pytest.raises(weft.NotFoundError, match="dense"):
        executable.lookup("sparse")
    executable.close()
    with pytest.raises(ValueError, match="the executable is closed"):
        executable.lookup("dense")
    with pytest.raises(weft.Error, match="nonexistent"):
        device.executable("/nonexistent.so")


def test_a_dispatch_computes_what_numpy_does(device):
    (x, w, b), tensors, out = dense_inputs(device)
    executable = device.executable(MLP_KERNELS)
    done = weft.Semaphore()
    k, n = w.shape
    device.dispatch(executable, "dense", (n + 63) // 64, [k, n, 1],
                    tensors + [out], signal=[(done, 1)])
    done.wait(1, timeout=10)
    np.testing.assert_allclose(out.numpy(), np.maximum(x @ w + b, 0),
                               rtol=1e-5, atol=1e-5)


def test_a_kernel_failure_reaches_python_with_its_message(device):
    (x, w, b), tensors, out = dense_inputs(device)
    executable = device.executable(MLP_KERNELS)
    done = weft.Semaphore()
    # Constants that say more than the bindings hold: the kernel refuses.
    device.dispatch(executable, 0, 2, np.array([1000, 70, 1], np.uint32),
                    tensors + [out], signal=[(done, 1)])
    with pytest.raises(weft.Error, match="dense"):
        done.wait(1, timeout=10)


def test_bad_dispatches_are_clear_errors(device):
    _, tensors, out = dense_inputs(device)
    executable = device.executable(MLP_KERNELS)
    with pytest.raises(weft.InvalidArgumentError, match="binding"):
        device.dispatch(executable, "dense", 1, [16, 70, 1], tensors)
    with pytest.raises(weft.OutOfRangeError, match="kernel 3"):
        device.dispatch(executable, 3, 1, [16, 70, 1], tensors + [out])
    with pytest.raises(TypeError, match="'constants.0.' must be int"):
        device.dispatch(executable, 0, 1, [1.5, 70, 1], tensors + [out])
    with pytest.raises(TypeError, match=r"'bindings\[0\]' must be"):
        device.dispatch(executable, 0, 1, [16, 70, 1], ["x"] * 4)


def test_a_reusable_command_buffer_runs_with_new_bindings(device):
    executable = device.executable(MLP_KERNELS)
    k, n = 16, 70
    recorded = device.command_buffer(reusable=True, binding_capacity=4)
    # Indirect references: slots filled at execute.
    recorded.fill((3, 0, None), np.float32(-1.0))
    recorded.barrier()
    recorded.dispatch(executable, "dense", (n + 63) // 64, [k, n, 0],
                      [(0, 0, None), (1, 0, None), (2, 0, None),
                       (3, 0, None)])
    recorded.end()
    assert recorded.command_count == 3
    step = weft.Semaphore()
    for round_ in range(1, 3):
        (x, w, b), tensors, out = dense_inputs(device, k, n, seed=round_)
        device.execute(recorded, tensors + [out], wait=[(step, round_ - 1)],
                       signal=[(step, round_)])
        step.wait(round_, timeout=10)
        np.testing.assert_allclose(out.numpy(), x @ w + b, rtol=1e-5,
                                   atol=1e-5)


def test_a_one_shot_command_buffer_of_transfers(device):
    source = weft.Tensor.from_numpy(np.arange(8, dtype=np.int32), device)
    target = weft.Tensor(device.allocate(32), np.int32, (8,))
    commands = device.command_buffer()
    commands.update(np.full(4, 9, np.int32), (target.buffer, 16, None))
    commands.copy((source.buffer, 0, 16), (target.buffer, 0, 16))
    commands.end()
    done = weft.Semaphore()
    device.execute(commands, signal=[(done, 1)])
    done.wait(1, timeout=10)
    np.testing.assert_array_equal(target.numpy(), [0, 1, 2, 3, 9, 9, 9, 9])


def test_kernels_and_command_buffers_free_everything():
    gc.collect()
    before = _weft._live_allocations()
    with weft.Device("local-task?workers=2") as device:
        executable = device.executable(MLP_KERNELS)
        commands = device.command_buffer(reusable=True, binding_capacity=4)
        commands.dispatch(executable, "dense", 1, [16, 70, 0],
                          [(i, 0, None) for i in range(4)])
        commands.end()
        (_, _, _), tensors, out = dense_inputs(device)
        done = weft.Semaphore()
        device.execute(commands, tensors + [out], signal=[(done, 1)])
        done.wait(1, timeout=10)
        del executable, commands, tensors, out, done
    gc.collect()
    assert _weft._live_allocations() == before
