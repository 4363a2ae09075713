"""The MLP of examples/mlp from Python: NumPy inputs, checked against NumPy.

    python3 examples/python/mlp.py [--device local-task] [--kernels LIB.so]

Runs mlp.wvm's forward on random inputs through weft.Program, compares the
result with the same network in NumPy, then shows what a wrong input gets:
a clear error naming the argument, before anything runs.
"""
import argparse
import os
import sys

import numpy as np

import weft

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="local-task")
    parser.add_argument("--kernels", default=os.path.join(
        ROOT, "build", "release", "examples", "libmlp_kernels.so"))
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    k, n1, n2 = 64, 128, 10
    x = rng.standard_normal(k).astype(np.float32)
    w1 = rng.standard_normal((k, n1)).astype(np.float32)
    b1 = rng.standard_normal(n1).astype(np.float32)
    w2 = rng.standard_normal((n1, n2)).astype(np.float32)
    b2 = rng.standard_normal(n2).astype(np.float32)

    with weft.Device(args.device) as device, weft.Program(
            os.path.join(ROOT, "examples", "mlp", "mlp.wvm"), device,
            kernels={"kernels": args.kernels}) as program:
        y = program.forward(x, w1, b1, w2, b2)
        expected = np.maximum(x @ w1 + b1, 0) @ w2 + b2
        difference = float(np.abs(y - expected).max())
        print(f"mlp on {device.driver}: y = {np.array2string(y, precision=3)}")
        print(f"largest difference from NumPy: {difference:.2e}")
        try:
            program.forward(x, w1.T, b1, w2, b2)
        except weft.InvalidArgumentError as error:
            print(f"w1 transposed is refused: {error}")
        if not np.allclose(y, expected, rtol=1e-4, atol=1e-4):
            print("mlp: the result does not match NumPy", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
