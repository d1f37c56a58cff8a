"""Memory of BlockADMM: what a run allocates, the check before it does, the cache plan.

`footprint` counts, per process and in bytes, everything the engine allocates for a run:
the state and the iteration's temporaries (O(n m + s m)), the graph-projection factors
(sum over blocks of min(n_i, s_j)^2 floats), the per-thread buffers of the sweep (one
feature block n_i x s_j and the map parameters of a block: d x s_j floats for the
projection maps, O(d) for Fastfood and TensorSketch, none for the identity map), a float32
copy of the rows, Anderson's memory, and the transient buffers of scoring.  `check_fits`
compares that with the available memory before anything is allocated and refuses with one
line that says what to change.  What is left of the budget goes to caches (`plan_cache`).

The paper (Section 3) counts, per process with n_i = n / R rows, s_j = s / C features per
block and t threads, the floats

    4 n m / R          O, Obar, nu, Dbar
  + 5 s m              Wbar, W', mu', mu, U
  + n d / R + n m / R  the data X_i, Y_i
  + t n s / (R C)      one Z_ij per thread
  + t s m / C + n m t / R + n m / R      per-thread temporaries and Delta
  + s^2 / C            the graph-projection factors

(`paper_estimate_bytes`); it leaves out the map parameters, and counts s^2 / C for the
factors where the engine needs min(n_i, s_j)^2 per block, so it is far off for wide inputs
and for the linear kernel (s = d).

`memory_budget` (bytes) is what the engine may spend beyond its working memory on caching:
whole Z blocks first (a cached block skips the transform), then the map parameters of the
remaining blocks.
"""
import os
from dataclasses import dataclass, field

from ..sketch import Identity
from ._graph_projection import row_sweep_buffer_bytes, sweep_buffer_bytes

FLOAT64 = 8
# Rows per chunk when outputs are scored or predicted block by block (skylite.estimators;
# memory: rows x max s_j).
SCORING_ROWS = 8192


def paper_estimate_bytes(n, d, m, s, R, C, t):
    """The paper's memory estimate per process, in bytes of float64 (see module docstring).

    Parameters
    ----------
    n, d, m, s : int
        Rows, input features, outputs and random features.
    R, C, t : int
        Row blocks (processes), column blocks and threads.

    Returns
    -------
    bytes : int
        The estimate.
    """
    floats = (4 * n * m / R + 5 * s * m + n * d / R + n * m / R + t * n * s / (R * C)
              + t * s * m / C + n * m * t / R + n * m / R + s * s / C)
    return int(floats * FLOAT64)


def available_memory_bytes():
    """MemAvailable from /proc/meminfo (Linux; else the free physical pages), and no more
    than the room left under this process's cgroup memory limit (a container's limit)."""
    available = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    available = int(line.split()[1]) * 1024
                    break
    except OSError:
        pass
    if available is None:
        available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    room = _cgroup_room()
    return available if room is None else min(available, room)


# cgroup v2, then v1: (limit file, usage file); an unlimited v2 limit reads "max"
_CGROUP_FILES = (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                 ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                  "/sys/fs/cgroup/memory/memory.usage_in_bytes"))


def _cgroup_room():
    """Bytes left under the cgroup memory limit, or None without a limit."""
    for limit_file, usage_file in _CGROUP_FILES:
        try:
            with open(limit_file) as f:
                limit = f.read().strip()
            with open(usage_file) as f:
                usage = int(f.read().strip())
        except (OSError, ValueError):
            continue
        if limit.isdigit() and int(limit) < 2**60:        # v1 writes "no limit" as ~2^63
            return max(int(limit) - usage, 0)
        return None
    return None


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


@dataclass
class Footprint:
    """Bytes one process allocates for a run, by part.  The `persistent` parts live for the
    whole run; the sweep's per-thread buffers (`sweep`) and the buffers of scoring
    (`scoring`) are allocated in turn, so the peak has the larger of the two on top."""
    persistent: dict
    sweep: dict
    scoring: int

    @property
    def total(self):
        """The peak, in bytes."""
        return sum(self.persistent.values()) + max(sum(self.sweep.values()), self.scoring)

    def parts(self):
        """The parts at the peak, by name."""
        transient = (self.sweep if sum(self.sweep.values()) >= self.scoring
                     else {"scoring": self.scoring})
        return {**self.persistent, **transient}

    def largest(self):
        """The name of the largest part at the peak."""
        return max(self.parts().items(), key=lambda item: item[1])[0]

    def describe(self, count=3):
        """'1.2 GiB (map parameters 1.0 GiB, feature blocks 120.0 MiB, ...)': the peak and
        its largest parts."""
        parts = sorted(self.parts().items(), key=lambda item: -item[1])[:count]
        return (f"{format_bytes(self.total)} ("
                + ", ".join(f"{name} {format_bytes(size)}" for name, size in parts) + ")")


def footprint(op, block_rows, m, *, n_threads, single, relaxed, anderson_memory=None,
              input_copy=0, row_sweep=False, map_data=0, regularizer_data=0):
    """The `Footprint` of a BlockADMM run before caching.

    op: the fitted map's BlockTransform; block_rows: the rows n_i of this process's row
    blocks; m: outputs; single: float32 blocks; relaxed: relaxation != 1 (B has 2m
    columns); anderson_memory: Anderson's memory, None without acceleration; input_copy:
    bytes of the float32 copy of the rows made for `single` (0 if none); row_sweep: step 3
    by the row sweep (tiles of ROW_TILE rows, every block's parameters kept) instead of the
    column sweep (an n_i x s_j block per thread); map_data: bytes of the arrays a map
    learned from data (Nystroem's landmarks and whitening); regularizer_data: bytes of a
    regularizer's own matrices (RKHSNorm's G and its factor).
    """
    s = int(op.n_features)
    offsets = op.block_offsets
    sizes = [int(offsets[j + 1] - offsets[j]) for j in range(op.n_blocks)]
    k = 2 * m if relaxed else m
    fixed_point = 2 * s * m + sum(3 * n_i * m + 2 * s * m for n_i in block_rows)
    persistent = {
        "state": FLOAT64 * (fixed_point + s * m + sum(n_i * m + s * m + s * k
                                                      for n_i in block_rows)),
        "iteration temporaries": FLOAT64 * (5 * s * m + sum(5 * n_i * m + n_i * k
                                                            for n_i in block_rows)),
        "factors": FLOAT64 * sum(min(n_i, s_j) ** 2 for n_i in block_rows for s_j in sizes),
    }
    if anderson_memory is not None:       # G and F: memory + 1 pairs, and one more x;
        carried = len(block_rows) * s * k if row_sweep else 0     # each image's G_i
        persistent[ANDERSON_PART] = FLOAT64 * (2 * (anderson_memory + 2) * fixed_point
                                               + (anderson_memory + 1) * carried)
    if input_copy:
        persistent["float32 rows"] = int(input_copy)
    if map_data:
        persistent["map landmarks"] = int(map_data)
    if regularizer_data:
        persistent["regularizer"] = int(regularizer_data)
    sweep = {"map parameters": 0, "feature blocks": 0, "sweep buffers": 0}
    for n_i in block_rows:          # the row blocks are swept one after the other
        parts = (row_sweep_buffer_bytes(op, n_i, m, k, single, n_threads) if row_sweep
                 else sweep_buffer_bytes(op, n_i, m, k, single, n_threads, True))
        for name, key in (("map parameters", "parameters"), ("feature blocks", "blocks"),
                          ("sweep buffers", "other")):
            sweep[name] = max(sweep[name], parts[key])
    rows = sum(block_rows)
    largest_params = max(op.n_params(j) for j in range(op.n_blocks))
    scoring = FLOAT64 * (largest_params + min(SCORING_ROWS, rows) * max(sizes) + rows * m)
    return Footprint(persistent, sweep, scoring)


# the name of Anderson acceleration's memory among a Footprint's persistent parts, and
# the advice a refusal gives for it
ANDERSON_PART = "Anderson memory"
ANDERSON_TIP = ("acceleration=None (--acceleration none): Anderson acceleration keeps copies "
                "of the iteration's state")


def anderson_tip(need):
    """ANDERSON_TIP when the Footprint `need` holds Anderson acceleration's memory (its
    part ANDERSON_PART), else None: the advice a refusal adds for it."""
    return ANDERSON_TIP if ANDERSON_PART in need.persistent else None


class MemoryRefused(MemoryError):
    """A run that would need more memory than is available, refused before allocating."""


def refusal(need, available, fmap, fitting_blocks):
    """The MemoryRefused for a run whose Footprint `need` exceeds `available` bytes: one
    line with what is needed, what is available and what to change, led by the largest
    part.  fitting_blocks: the smallest number of column blocks that would fit, or None."""
    more_blocks = (f"n_blocks={fitting_blocks} (--blocks {fitting_blocks})"
                   if fitting_blocks else None)
    fewer_features = ("fewer input columns (the linear kernel has s = d)"
                      if isinstance(fmap, Identity) else "fewer features (n_features, --features)")
    largest = need.largest()
    if largest == "map parameters":
        tips = [f"{type(fmap).__name__} draws a {fmap.n_features_in_} x s_j matrix per "
                f"block and thread: for rows this wide use the linear kernel, or a linear "
                f"sketch to a few thousand dimensions before the kernel map "
                f"(skylite.sketch.ComposedMap)", more_blocks,
                "fewer threads", fewer_features]
    elif largest == "feature blocks":
        tips = [more_blocks, "fewer threads", "fewer rows per process (more MPI ranks)",
                fewer_features]
    elif largest == "factors":
        tips = [more_blocks, fewer_features]
    else:
        tips = [fewer_features, "fewer rows per process (more MPI ranks)", more_blocks]
    anderson = anderson_tip(need)
    if anderson:
        tips.insert(0 if largest == ANDERSON_PART else len(tips), anderson)
    advice = "; ".join(tip for tip in tips if tip)
    section = ("wide sparse rows" if largest == "map parameters"
               else "n_blocks and memory_budget")
    return MemoryRefused(f"training needs {need.describe()} per process but "
                         f"{format_bytes(available)} is available; {advice} "
                         f"(docs/choosing_parameters.md, {section})")


class WideInputWarning(UserWarning):
    """A map's random parameters take far more memory (and time) than the features they
    produce: the input rows are too wide for it."""


def wide_input_message(need, fmap):
    """A message for WideInputWarning when the map parameters of the sweep exceed 1 GiB
    and four times its feature blocks (a d x s_j matrix per block for rows of d >> n_i
    columns), else None."""
    sweep = need.sweep
    if sweep["map parameters"] <= max(2**30, 4 * sweep["feature blocks"]):
        return None
    return (f"{type(fmap).__name__}'s random parameters take "
            f"{format_bytes(sweep['map parameters'])} (a {fmap.n_features_in_} x s_j matrix "
            f"per block and thread) for feature blocks of "
            f"{format_bytes(sweep['feature blocks'])}: for rows this wide use the linear "
            f"kernel, or a linear sketch to a few thousand dimensions before the kernel map "
            f"(skylite.sketch.ComposedMap; docs/choosing_parameters.md, wide sparse rows)")


def format_bytes(size):
    """1536 -> '1.5 KiB'."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"
