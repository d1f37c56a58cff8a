"""Memory of BlockADMM: the paper's per-process estimate and the cache plan under a budget.

The paper (Section 3) counts, per process with n_i = n / R rows, s_j = s / C features per
block and t threads, the floats

    4 n m / R          O, Obar, nu, Dbar
  + 5 s m              Wbar, W', mu', mu, U
  + n d / R + n m / R  the data X_i, Y_i
  + t n s / (R C)      one Z_ij per thread
  + t s m / C + n m t / R + n m / R      per-thread temporaries and Delta
  + s^2 / C            the graph-projection factors

`memory_budget` (bytes) is what the engine may spend beyond that on caching: whole Z blocks
first (a cached block skips the transform), then the map parameters of the remaining blocks.
"""
import os
from dataclasses import dataclass, field

FLOAT64 = 8


def paper_estimate_bytes(n, d, m, s, R, C, t):
    """The paper's memory estimate per process, in bytes of float64 (see module docstring)."""
    floats = (4 * n * m / R + 5 * s * m + n * d / R + n * m / R + t * n * s / (R * C)
              + t * s * m / C + n * m * t / R + n * m / R + s * s / C)
    return int(floats * FLOAT64)


def available_memory_bytes():
    """MemAvailable from /proc/meminfo (Linux), else free physical pages."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


@dataclass
class CachePlan:
    """Which column blocks keep Z (cache_z) or their map parameters (cache_params)."""
    cache_z: list = field(default_factory=list)
    cache_params: list = field(default_factory=list)
    budget: int = 0
    used: int = 0

    @property
    def n_z_cached(self):
        return sum(self.cache_z)

    @property
    def n_params_cached(self):
        return sum(self.cache_params)


def plan_cache(block_sizes, param_sizes, n_rows, budget, single):
    """Spend `budget` bytes: Z blocks (n_rows x s_j) in order, then parameters of the rest.

    single: Z and parameters are float32 (4 bytes) instead of float64.
    """
    item = 4 if single else 8
    plan = CachePlan(budget=int(budget))
    left = int(budget)
    for s_j in block_sizes:
        need = n_rows * s_j * item
        plan.cache_z.append(need <= left)
        if need <= left:
            left -= need
    for j, p in enumerate(param_sizes):
        need = p * item
        plan.cache_params.append(not plan.cache_z[j] and 0 < need <= left)
        if plan.cache_params[-1]:
            left -= need
    plan.used = int(budget) - left
    return plan
