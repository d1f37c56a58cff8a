"""
Kernel approximation error against the number of features
==========================================================

How well do random features approximate their kernels?  For every feature map of skylite,
the relative Frobenius error of the approximate Gram matrix,

    ||Z Z^T - K||_F / ||K||_F,

on 500 pendigits rows (shipped with skylite), as the number of features s grows, averaged
over three seeds (one seed's error is itself random).  Each panel is a kernel; its lines are
the maps that approximate it (``kernel.methods``), and the dashed line falls like
1/sqrt(s), the Monte Carlo rate.  Run it with::

    python examples/plot_kernel_approximation.py

Two maps of the linear kernel are exact on these rows and are not drawn: the identity, and
SRHT, whose blocks sample rows of a d x d Hadamard transform without replacement (with
s_j >= d = 16 rows per block a block keeps them all, and S^T S = I).  Nystroem features
(``nystroem``, with k-means landmarks, and ``nystroem uniform``, with rows drawn uniformly)
are not random projections but landmarks from the data: they need at least s rows, so they are drawn up to s = 256.
"""

# %%
# The data, the kernels and their maps
# ------------------------------------
# pendigits' 16 features are integers 0..100; scaled to [0, 1].  The bandwidths are the
# ones the other examples use (fixed a priori).  ``"qmc"`` is an alias of ``"qmc_sobol"``,
# so it is left out.  The last map of the Gaussian panel is a :class:`~skylite.sketch.ComposedMap`:
# a JLT to 8 dimensions, then Gaussian random Fourier features of the sketched rows.
import matplotlib.pyplot as plt
import numpy as np

from skylite.datasets import load_pendigits
from skylite.kernels import ExpSemigroup, Gaussian, Laplacian, Linear, Matern, Polynomial
from skylite.sketch import JLT, ComposedMap, GaussianRFF

X = load_pendigits()[0][:500] / 100.0
sizes = 2 ** np.arange(5, 13)                  # s = 32 .. 4096
seeds = range(3)

kernels = [Gaussian(0.6), Laplacian(4.0), Matern(1.5, 0.6), ExpSemigroup(0.1),
           Polynomial(2, 1.0 / 16, 1.0), Linear()]


def maps_of(kernel, s, seed):
    """The kernel's feature maps with s features, by name (unfitted)."""
    maps = {method: kernel.feature_map(s, n_blocks=4, random_state=seed, method=method)
            for method in kernel.methods if method not in ("qmc", "identity", "srht")
            and not (method == "nystroem" and s > len(X))}
    if "nystroem" in maps:
        maps["nystroem uniform"] = kernel.feature_map(s, n_blocks=4, random_state=seed,
                                                      method="nystroem", landmarks="uniform")
    if isinstance(kernel, Gaussian):
        maps["JLT(8) then rff"] = ComposedMap(JLT(8), GaussianRFF(s, sigma=kernel.sigma,
                                                                 n_blocks=4),
                                              random_state=seed)
    return maps


def gram_error(fmap, K):
    """||Z Z^T - K||_F / ||K||_F for the map fitted on X."""
    Z = fmap.fit(X).transform(X)
    return np.linalg.norm(Z @ Z.T - K) / np.linalg.norm(K)


# %%
# The errors
# ----------
errors = {}
for kernel in kernels:
    K = kernel.gram(X)
    for s in sizes:
        for seed in seeds:
            for name, fmap in maps_of(kernel, int(s), seed).items():
                errors.setdefault((repr(kernel), name), {}).setdefault(s, []).append(
                    gram_error(fmap, K))
# per map: the sizes it was drawn at and the mean error over the seeds at each
mean = {key: (np.array(list(by_size)), np.array([np.mean(v) for v in by_size.values()]))
        for key, by_size in errors.items()}

# %%
# Error against s, log-log
# ------------------------
# The Monte Carlo maps (``rff``, ``random_laplace``, the linear sketches) follow the
# 1/sqrt(s) line: four times more features halve the error.  Nystroem features fall much
# faster, for every kernel: their landmarks come from the data, and the error vanishes when
# every row is a landmark.  Quasi-Monte-Carlo features
# (``qmc_sobol``, ``qmc_halton``) are a little more accurate at the same s on these
# 16-dimensional rows, Fastfood as accurate as Monte Carlo.  With three seeds the
# hashing and heavy-tailed maps (``tensorsketch``, ``countsketch``, ``random_laplace``)
# still wander around the line.  The composition levels off: its error cannot fall below
# the distortion of the 8-dimensional sketch, however many features follow it.
fig, axes = plt.subplots(2, 3, figsize=(12, 7), sharex=True, layout="constrained")
for panel, kernel in zip(axes.ravel(), kernels):
    names = [name for (k, name) in mean if k == repr(kernel)]
    for name in names:
        panel.loglog(*mean[(repr(kernel), name)], "o-", markersize=3, label=name)
    start = mean[(repr(kernel), names[0])][1][0]
    panel.loglog(sizes, start * np.sqrt(sizes[0] / sizes), "k--", linewidth=1,
                 label="1/sqrt(s)")
    panel.set_title(repr(kernel), fontsize=9)
    panel.grid(True, which="major", alpha=0.3)
    panel.legend(fontsize=7)
for panel in axes[1]:
    panel.set_xlabel("features s")
for panel in axes[:, 0]:
    panel.set_ylabel("||Z Z^T - K||_F / ||K||_F")
fig.suptitle(f"Gram error on {len(X)} pendigits rows, mean of {len(seeds)} seeds")
plt.show()

# %%
# The slopes
# ----------
# The slope of log(error) against log(s) for each map: -0.5 is the Monte Carlo rate.
for (kernel, name), (drawn, values) in mean.items():
    slope = np.polyfit(np.log(drawn), np.log(values), 1)[0]
    print(f"{kernel:<46} {name:<16} slope {slope:6.2f}   error at s={drawn[-1]}: "
          f"{100 * values[-1]:.2f}%")
