"""How well do random features approximate their kernels?  (pendigits, shipped with skylite)

    python examples/kernel_approximation.py

Prints the relative Frobenius error ||Z Z^T - K||_F / ||K||_F for each kernel as the number
of features s grows: it falls like 1/sqrt(s).
"""
import numpy as np

from skylite.datasets import load_pendigits
from skylite.kernels import ExpSemigroup, Gaussian, Laplacian, Matern, Polynomial

X = load_pendigits()[0][:500] / 100.0
kernels = [Gaussian(0.6), Laplacian(4.0), Matern(1.5, 0.6), ExpSemigroup(0.1),
           Polynomial(2, 1.0 / 16, 1.0)]
sizes = [256, 1024, 4096, 16384]
print(f"{'kernel':<42}" + "".join(f"{'s=' + str(s):>10}" for s in sizes))
for kernel in kernels:
    K = kernel.gram(X)
    errors = []
    for s in sizes:
        Z = kernel.feature_map(s, n_blocks=4, random_state=0).fit(X).transform(X)
        errors.append(np.linalg.norm(Z @ Z.T - K) / np.linalg.norm(K))
    print(f"{kernel!r:<42}" + "".join(f"{100 * e:9.2f}%" for e in errors))
