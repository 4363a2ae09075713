"""Semaphores: signal, query, wait (GIL released, Ctrl-C), failures."""
import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import weft


def test_signal_query_and_name():
    semaphore = weft.Semaphore(3, name="step")
    assert semaphore.query() == 3
    semaphore.signal(5)
    assert semaphore.query() == 5
    assert semaphore.name == "step"
    semaphore.name = "renamed"
    assert "renamed" in repr(semaphore)
    with pytest.raises(weft.InvalidArgumentError,
                       match="'renamed': signal to 4 but already at 5"):
        semaphore.signal(4)


def test_wait_times_out_as_a_timeout_error():
    semaphore = weft.Semaphore()
    start = time.monotonic()
    with pytest.raises(weft.DeadlineExceededError) as raised:
        semaphore.wait(1, timeout=0.05)
    assert isinstance(raised.value, TimeoutError)
    assert time.monotonic() - start >= 0.04
    with pytest.raises(TimeoutError):
        semaphore.wait(1, timeout=0)
    with pytest.raises(ValueError, match="timeout"):
        semaphore.wait(1, timeout=-1)


def test_wait_lets_other_threads_run():
    semaphore = weft.Semaphore()

    def later():
        time.sleep(0.05)
        semaphore.signal(1)  # needs the GIL the waiter let go

    thread = threading.Thread(target=later)
    thread.start()
    semaphore.wait(1, timeout=10)
    thread.join()


def test_a_failure_travels_down_the_timeline_with_its_message(device):
    gate = weft.Semaphore(name="gate")
    done = device.semaphore(0)
    buffer = device.allocate(16)
    device.fill(buffer, np.uint8(1), wait=[(gate, 1)], signal=[(done, 1)])
    gate.fail("the upstream step failed", code=14)
    with pytest.raises(weft.UnavailableError) as raised:
        done.wait(1, timeout=10)
    assert raised.value.code == 14
    assert "the upstream step failed" in str(raised.value)
    with pytest.raises(weft.UnavailableError):
        done.query()


def test_fail_refuses_a_non_failure_code():
    with pytest.raises(ValueError, match="code"):
        weft.Semaphore().fail("no", code=0)
    with pytest.raises(ValueError, match="weft.Error, the base"):
        weft.Semaphore().fail("no", code=weft.Error)
    with pytest.raises(TypeError, match="weft.Error's subclasses"):
        weft.Semaphore().fail("no", code=ValueError)
    with pytest.raises(TypeError, match="weft.Error's subclasses"):
        weft.Semaphore().fail("no", code=weft.CancelledError("an instance"))


def test_fail_takes_the_error_classes_for_their_codes():
    # The docstring's promise: code=weft.CancelledError once raised
    # TypeError.
    semaphore = weft.Semaphore()
    semaphore.fail("stopped", code=weft.CancelledError)
    with pytest.raises(weft.CancelledError, match="stopped") as raised:
        semaphore.wait(1)
    assert raised.value.code == weft.CancelledError.code == 1
    default = weft.Semaphore()
    default.fail("gave up")
    with pytest.raises(weft.AbortedError):
        default.query()
    fence = weft.Fence.at(weft.Semaphore(), 1)
    fence.fail("lost", code=weft.DataLossError)
    with pytest.raises(weft.DataLossError, match="lost"):
        fence.wait()


def test_a_semaphore_failed_with_deadline_exceeded_ends_the_wait():
    semaphore = weft.Semaphore()
    semaphore.fail("the producer timed out", code=4)
    with pytest.raises(weft.DeadlineExceededError,
                       match="the producer timed out"):
        semaphore.wait(1)  # no timeout: must still return


def test_ctrl_c_interrupts_a_wait():
    # The child's helper thread sends the SIGINT once it has the GIL, and
    # with a switch interval longer than the case the main thread lets go
    # of it first inside wait(): the signal lands during the wait, however
    # the child is scheduled. (CPython's GIL: a free-threaded build needs
    # another way.)
    program = textwrap.dedent("""
        import os, signal, sys, threading, weft
        semaphore = weft.Semaphore()
        sys.setswitchinterval(3600)
        armed = threading.Lock()
        armed.acquire()
        def interrupt():
            armed.acquire()
            os.kill(os.getpid(), signal.SIGINT)
        threading.Thread(target=interrupt, daemon=True).start()
        try:
            armed.release()
            semaphore.wait(1)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(0)
        sys.exit(1)
    """)
    child = subprocess.Popen([sys.executable, "-c", program],
                             stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ))
    out, _ = child.communicate(timeout=30)
    assert child.returncode == 0
    assert out.strip() == "interrupted"