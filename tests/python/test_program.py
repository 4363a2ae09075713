"""weft.Program: VM programs called with NumPy, typed boundaries checked."""
import gc
import os

import numpy as np
import pytest

import weft
from weft import _weft

SOURCE_DIR = os.environ.get("WEFT_SOURCE_DIR", "")
MLP_KERNELS = os.environ.get("WEFT_MLP_KERNELS", "")
MLP = os.path.join(SOURCE_DIR, "examples", "mlp", "mlp.wvm")
SCALARS = os.path.join(SOURCE_DIR, "tests", "tools", "data", "weft_run.wvm")

needs_mlp = pytest.mark.skipif(
    not (MLP_KERNELS and os.path.exists(MLP)),
    reason="the MLP example's kernels were not built")


def mlp_inputs(k=64, n1=128, n2=10, seed=3):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(np.float32)
            for shape in ((k,), (k, n1), (n1,), (n1, n2), (n2,))]


def mlp_reference(x, w1, b1, w2, b2):
    return np.maximum(x @ w1 + b1, 0) @ w2 + b2


@pytest.fixture
def mlp(device):
    with weft.Program(MLP, device, kernels={"kernels": MLP_KERNELS}) as program:
        yield program


@needs_mlp
def test_the_mlp_from_numpy_matches_numpy(mlp):
    assert mlp.functions() == ["forward"]
    inputs = mlp_inputs()
    y = mlp.forward(*inputs)
    assert y.dtype == np.float32 and y.shape == (10,)
    np.testing.assert_allclose(y, mlp_reference(*inputs), rtol=1e-4,
                               atol=1e-4)
    # Other sizes bind the declared symbols afresh on every call.
    small = mlp_inputs(k=8, n1=16, n2=3, seed=5)
    np.testing.assert_allclose(mlp.forward(*small), mlp_reference(*small),
                               rtol=1e-4, atol=1e-4)


@needs_mlp
@pytest.mark.parametrize("change,message", [
    (lambda v: [v[0].astype(np.float64)] + v[1:],
     "forward: argument 1 'x' must be K1 f32, got 64 f64 "
     "(element type f64, not f32)"),
    (lambda v: [v[0].astype(np.int32)] + v[1:],
     "got 64 i32 (element type i32, not f32)"),
    (lambda v: [v[0].reshape(2, 32)] + v[1:],
     "argument 1 'x' must be K1 f32, got 2x32 f32 (rank 2, not 1)"),
    (lambda v: [v[0][:5]] + v[1:],
     "argument 2 'w1' must be 5xN1 f32, got 64x128 f32 "
     "(K1 is 5 from argument 1 'x')"),
    (lambda v: [v[0], v[1].T] + v[2:],
     "argument 2 'w1' must be 64xN1 f32, got 128x64 f32 (transposed?"),
])
def test_bad_inputs_are_clear_errors(mlp, change, message):
    with pytest.raises(weft.InvalidArgumentError) as raised:
        mlp.forward(*change(mlp_inputs()))
    assert message in str(raised.value)


@needs_mlp
def test_wrong_counts_kinds_and_names(mlp):
    inputs = mlp_inputs()
    with pytest.raises(weft.InvalidArgumentError, match="takes 5 arguments"):
        mlp.forward(*inputs[:2])
    with pytest.raises(TypeError, match=r"forward\(\) argument 1: a tensor"):
        mlp.forward(1.5, *inputs[1:])
    with pytest.raises(AttributeError, match="no exported function 'layer' "
                                             r"\(it exports forward\)"):
        mlp.layer
    with pytest.raises(TypeError, match="no weft element type"):
        mlp.forward(inputs[0].astype(np.complex64), *inputs[1:])


def test_scalars_and_a_failing_program(device):
    with weft.Program(SCALARS, device) as program:
        assert program.add(40, 2) == 42
        with pytest.raises(weft.InvalidArgumentError,
                           match=r"division by zero; VM stack: at wr.divide"):
            program.divide(1, 0)
        with pytest.raises(OverflowError,
                           match=r"add\(\) argument '1' must be an i32"):
            program.add(2**40, 1)
        # A declared result the program breaks: the error names it.
        with pytest.raises(weft.InvalidArgumentError,
                           match="liar: result 1 'w' must be 4 f32, got 3 f32"):
            program.liar(np.ones(3, dtype=np.float32))


def test_a_program_that_does_not_load_says_why(device):
    with pytest.raises(weft.NotFoundError, match="nonexistent.wvm"):
        weft.Program("/nonexistent.wvm", device)
    with pytest.raises(weft.NotFoundError, match="kernels 'kernels'"):
        weft.Program(SCALARS, device, kernels={"kernels": "/nonexistent.so"})


@needs_mlp
def test_programs_free_everything():
    gc.collect()
    before = _weft._live_allocations()
    with weft.Device("local-task?workers=2") as device:
        with weft.Program(MLP, device,
                          kernels={"kernels": MLP_KERNELS}) as program:
            program.forward(*mlp_inputs())
    gc.collect()
    assert _weft._live_allocations() == before


FOREVER = """module hang
import hal.device.default () -> (r<hal.device>)
import hal.fence.create (r<hal.device>) -> (r<hal.fence>)
import hal.fence.await (r<hal.fence>?, i64) -> (i32)
import hal.semaphore.signal (r<hal.semaphore>, i64) -> ()
; Signals |started| to 1, then awaits a fence nothing signals, with no
; timeout.
func @forever (r<hal.semaphore>) -> (i32) export
  const.i64 s0, 1
  call.import hal.semaphore.signal(r0, s0) -> ()
  call.import hal.device.default() -> (r1)
  call.import hal.fence.create(r1) -> (r2)
  const.i64 s1, -1
  call.import hal.fence.await(r2, s1) -> (s2)
  ret (s2)
end

func @two () -> (i32) export
  const.i32 s0, 2
  ret (s0)
end
"""


@pytest.mark.parametrize("device_string", ["local-sync",
                                           "local-task?workers=2"])
def test_ctrl_c_interrupts_a_program_call(tmp_path, device_string):
    # The call is abandoned: KeyboardInterrupt, the invocation cancelled
    # and released, the program usable, nothing leaked.
    import signal
    import subprocess
    import sys
    import textwrap
    path = tmp_path / "hang.wvm"
    path.write_text(FOREVER)
    child_program = textwrap.dedent("""
        import gc, sys, threading, weft
        from weft import _weft
        gc.collect()
        before = _weft._live_allocations()
        device = weft.Device(sys.argv[2])
        program = weft.Program(sys.argv[1], device)
        started = weft.Semaphore()
        # Says "calling" once the VM runs the function (the main thread
        # is then inside the call, without the GIL).
        threading.Thread(target=lambda: (started.wait(1, timeout=60),
                                         print("calling", flush=True)),
                         daemon=True).start()
        try:
            program.forever(started)
            print("returned", flush=True)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
        print("then", program.two(), flush=True)
        program.close()
        started.close()
        device.close()
        gc.collect()
        print("leaked", _weft._live_allocations() - before, flush=True)
    """)
    child = subprocess.Popen(
        [sys.executable, "-c", child_program, str(path), device_string],
        stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        assert child.stdout.readline().strip() == "calling"
        child.send_signal(signal.SIGINT)
        # A hang guard only: the outcome is what is asserted.
        out, _ = child.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        pytest.fail("SIGINT did not reach the blocked program call")
    assert child.returncode == 0
    assert out.split("\n")[:3] == ["interrupted", "then 2", "leaked 0"]
