"""Memory of BlockADMM: what a run allocates, the plan made before it does, the cache plan.

`footprint` counts, per process and in bytes, everything the engine allocates for a run:
the state and the iteration's temporaries (O(n m + s m)), the graph-projection factors
(sum over blocks of min(n_i, s_j)^2 floats), the per-thread buffers of the sweep (one
feature block n_i x s_j and the map parameters of a block: d x s_j floats for the
projection maps, O(d) for Fastfood and TensorSketch, none for the identity map), a float32
copy of the rows, Anderson's memory, and the transient buffers of scoring.  `plan_run`
compares that with the budget and the available memory before anything is allocated, picks
the sweep and the row blocks, and refuses a run that cannot fit with one line that says what
to change.  What is left of the budget goes to caches (`RunPlan.caches`, `plan_cache`).

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

`memory_budget` (bytes) bounds everything the fit allocates (the input rows aside): the
working memory first, with the rows split into as many row blocks as it takes to fit, then
caches in what is left, whole Z blocks first (a cached block skips the transform), then the
map parameters of the remaining blocks.  None takes half the available memory; 0 caches
nothing.  The machine's available memory is probed in `skylite._machine`.

A cached Z block takes n_i s_j values of `cache_precision` (`CACHE_ITEM_BYTES`): the
transform's precision, or bfloat16 (2 bytes, with float32 blocks), which "auto" takes when it
caches more blocks (`cache_precision_for`).
"""
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .._machine import format_bytes
from .._outputs import SCORING_ROWS
from ..sketch import MAX_BLOCK, Identity, map_from_dict
from ..sketch._base import operator_for_rows
from ._column_sweep import sweep_buffer_bytes
from ._row_sweep import row_sweep_buffer_bytes

FLOAT64 = 8
#: bytes per value of a cached Z block, by cache precision
CACHE_ITEM_BYTES = {"float64": 8, "float32": 4, "bfloat16": 2}


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


def plan_cache(block_sizes, param_sizes, n_rows, budget, single, z_item=None):
    """Spend `budget` bytes: Z blocks (n_rows x s_j) in order, then parameters of the rest.

    single: Z and parameters are float32 (4 bytes) instead of float64; z_item: bytes per
    value of a cached Z block, if not those (2 for bfloat16).
    """
    item = 4 if single else 8
    z_item = item if z_item is None else z_item
    plan = CachePlan(budget=int(budget))
    left = int(budget)
    for s_j in block_sizes:
        need = n_rows * s_j * z_item
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


# The automatic row-block plan (`plan_run`) splits the rows into at most this many blocks of
# at least this many rows.
MAX_ROW_BLOCKS = 256
MIN_BLOCK_ROWS = 1024


def row_ranges(n, R):
    """[(start, stop), ...] of R near-equal row blocks of n rows."""
    if R > n:
        raise ValueError(f"n_row_blocks ({R}) cannot exceed the number of rows ({n})")
    bounds = np.linspace(0, n, R + 1).round().astype(int)
    return [(bounds[i], bounds[i + 1]) for i in range(R)]


@dataclass
class RunPlan:
    """What `plan_run` decided for one process: the sweep (`row_sweep`), the row blocks
    (`ranges`, (start, stop) each), their working memory (`footprint`), the bytes left
    for caches (`cache_budget`), the operator whose parameters it counted (`op`: the map's,
    for sparse rows restricted to the columns they use) and the precision of cached Z
    blocks this process would take (`cache_precision`; the ranks of an MPI run then agree
    on one)."""
    row_sweep: bool
    ranges: list
    footprint: Footprint
    cache_budget: int
    op: object
    cache_precision: str = "float64"

    @property
    def block_rows(self):
        """n_i of each row block."""
        return [int(b - a) for a, b in self.ranges]

    def caches(self, single, cache_precision=None):
        """The CachePlan of each row block, an equal share of `cache_budget` each, with Z
        blocks in `cache_precision` (None: `self.cache_precision`).  With the row sweep every
        block's parameters are in the working memory already: only Z blocks are cached, and
        the parameters of the others are kept."""
        op = self.op
        sizes = list(np.diff(op.block_offsets))
        share = self.cache_budget // len(self.ranges)
        z_item = CACHE_ITEM_BYTES[cache_precision or self.cache_precision]
        plans = []
        for n_i in self.block_rows:
            if self.row_sweep:
                plan = plan_cache(sizes, [0] * op.n_blocks, n_i, share, single, z_item)
                plan.cache_params = [not z for z in plan.cache_z]
            else:
                plan = plan_cache(sizes, [op.n_params(j) for j in range(op.n_blocks)], n_i,
                                  share, single, z_item)
            plans.append(plan)
        return plans


def run_footprint(op, block_rows, m, *, feature_map, regularizer, settings, n_threads,
                  input_copy=0, row_sweep=False):
    """The `footprint` of a BlockADMM run with these (resolved) EngineSettings, of the
    feature map `feature_map` (its landmarks) and the regularizer (its own matrices)."""
    return footprint(op, block_rows, m, n_threads=n_threads,
                     single=settings.precision == "float32",
                     relaxed=settings.relaxation != 1.0,
                     anderson_memory=(settings.anderson_memory
                                      if settings.acceleration else None),
                     input_copy=input_copy, row_sweep=row_sweep,
                     map_data=sum(a.nbytes for a in feature_map.fitted_arrays().values()),
                     regularizer_data=(regularizer.nbytes()
                                       if hasattr(regularizer, "nbytes") else 0))


def plan_run(feature_map, regularizer, settings, n_threads, X, m, available):
    """The memory plan of one process's BlockADMM run, before anything is allocated.

    X: this process's rows (n_i x d); m: outputs; available: the bytes this process may use
    (its share of the machine's available memory).  The budget B is `memory_budget`, or
    half of `available` (None, or 0 which only turns the caches off).  The row sweep is
    taken when `sweep` allows it, every row block has at least s_j rows, and its working
    memory fits B (always with sweep="rows"); R is then n_row_blocks or 1.  For the column
    sweep R is n_row_blocks if given, else the fewest row blocks (up to MAX_ROW_BLOCKS, at
    least MIN_BLOCK_ROWS rows each) whose working memory fits in B; when none does, the R
    of least working memory is taken if it fits in `available` and no budget was set.  The
    cache budget is B minus the working memory (0 for memory_budget=0).

    Returns (RunPlan, message of a WideInputWarning or None); raises MemoryRefused when the
    run cannot fit, ValueError when sweep="rows" cannot be.  The map's parameters are
    counted for the input columns X's rows use (`operator_for_rows`), as the run draws them.
    """
    op = operator_for_rows(feature_map.transform_op_, X)[0]
    n = X.shape[0]
    converted = settings.precision == "float32" and X.dtype != np.float32
    input_copy = (X.data.nbytes // 2 + X.indices.nbytes + X.indptr.nbytes
                  if sp.issparse(X) else X.nbytes // 2) if converted else 0
    given = settings.memory_budget if settings.memory_budget else None
    budget = given if given is not None else available // 2

    def need(R, row_sweep=False, op=op):
        return run_footprint(op, [b - a for a, b in row_ranges(n, R)], m,
                             feature_map=feature_map, regularizer=regularizer,
                             settings=settings, n_threads=n_threads, input_copy=input_copy,
                             row_sweep=row_sweep)

    widest = int(max(np.diff(op.block_offsets)))
    row_sweep = False
    if settings.sweep != "columns":
        R = settings.n_row_blocks or 1
        fewest_rows = min(b - a for a, b in row_ranges(n, R))
        if fewest_rows < widest and settings.sweep == "rows":
            raise ValueError(f"sweep='rows' needs at least as many rows per row block as "
                             f"features per column block ({widest}), got {fewest_rows}; "
                             f"use sweep='columns' or more column blocks")
        if fewest_rows >= widest:
            plan = need(R, row_sweep=True)
            row_sweep = settings.sweep == "rows" or plan.total <= min(budget, available)
    if not row_sweep:
        R, plan = _column_sweep_row_blocks(need, n, budget, settings.n_row_blocks)
    ranges = row_ranges(n, R)
    if plan.total > available:
        raise refusal(plan, available, feature_map,
                      _fitting_blocks(feature_map,
                                      lambda op: need(R, op=operator_for_rows(op, X)[0]),
                                      available), columns=op.n_features_in)
    if given is not None and plan.total > given:
        tip = anderson_tip(plan)
        anderson = f", or {tip}" if tip else ""
        raise MemoryRefused(
            f"memory_budget={format_bytes(given)} is less than this run's working memory, "
            f"{plan.describe()} at the least (with {R} row block{'s' * (R > 1)}); raise "
            f"memory_budget, or use more column blocks or fewer features{anderson} "
            f"(docs/choosing_parameters.md, n_blocks and memory_budget)")
    cache_budget = (0 if settings.memory_budget == 0 else
                    max(0, min(budget, available) - plan.total))
    run_plan = RunPlan(row_sweep, ranges, plan, cache_budget, op)
    run_plan.cache_precision = cache_precision_for(settings, run_plan)
    return run_plan, wide_input_message(plan, feature_map, columns=op.n_features_in)


def cache_precision_for(settings, run_plan):
    """The precision of cached Z blocks under `run_plan`: settings.cache_precision unless
    "auto"; "auto" takes bfloat16 when the blocks are float32 and bfloat16 caches more of
    them within the cache budget, else the blocks' own precision (nothing is rounded)."""
    single = settings.precision == "float32"
    if settings.cache_precision != "auto":
        return settings.cache_precision
    if not single:
        return "float64"
    cached = {p: sum(plan.n_z_cached for plan in run_plan.caches(single, p))
              for p in ("float32", "bfloat16")}
    return "bfloat16" if cached["bfloat16"] > cached["float32"] else "float32"


def agreed_cache_precision(run_plan, settings, dist):
    """The cache precision of every rank: `run_plan`'s, except that with "auto" the ranks
    take bfloat16 if any rank's plan does, so that every rank rounds the same features.
    Collective under MPI (`dist`): call it before anything that can fail on one rank."""
    bfloat16 = run_plan.cache_precision == "bfloat16"
    if settings.cache_precision == "auto" and not dist.serial:
        bfloat16 = dist.sum_to_all([float(bfloat16)])[0] > 0
    return "bfloat16" if bfloat16 else run_plan.cache_precision


def _column_sweep_row_blocks(need, n, budget, n_row_blocks):
    """(R, footprint) for the column sweep: n_row_blocks if given, else the fewest row
    blocks whose working memory `need(R)` fits in `budget`, else the least of them."""
    if n_row_blocks is not None:
        return n_row_blocks, need(n_row_blocks)
    most = max(1, min(MAX_ROW_BLOCKS, n // MIN_BLOCK_ROWS))
    R, plan = 1, need(1)
    best = (plan.total, R, plan)
    while plan.total > budget and R < most:
        R += 1
        plan = need(R)
        best = min(best, (plan.total, R, plan), key=lambda b: b[0])
    if plan.total > budget:
        _, R, plan = best
    return R, plan


def _fitting_blocks(fmap, need, available):
    """The smallest number of column blocks (doubling, up to s and MAX_BLOCK) whose working
    memory `need(op)` (op: the map's BlockTransform with that many blocks) fits in
    `available` bytes, or None."""
    description = fmap.to_dict()
    if "n_blocks" not in description["params"]:        # e.g. a ComposedMap
        return None
    C = fmap.transform_op_.n_blocks * 2
    while C <= min(fmap.transform_op_.n_features, MAX_BLOCK):
        trial = map_from_dict(dict(description, params=dict(description["params"], n_blocks=C)),
                              arrays=fmap.fitted_arrays())
        if need(trial.transform_op_).total <= available:
            return C
        C *= 2
    return None


# the name of Anderson acceleration's memory among a Footprint's persistent parts, and
# the advice a refusal gives for it
ANDERSON_PART = "Anderson memory"
ANDERSON_TIP = ("acceleration=None: Anderson acceleration keeps copies of the iteration's "
                "state")


def anderson_tip(need):
    """ANDERSON_TIP when the Footprint `need` holds Anderson acceleration's memory (its
    part ANDERSON_PART), else None: the advice a refusal adds for it."""
    return ANDERSON_TIP if ANDERSON_PART in need.persistent else None


class MemoryRefused(MemoryError):
    """A run that would need more memory than is available, refused before allocating."""


def refusal(need, available, fmap, fitting_blocks, columns=None):
    """The MemoryRefused for a run whose Footprint `need` exceeds `available` bytes: one
    line with what is needed, what is available and what to change, led by the largest
    part.  fitting_blocks: the smallest number of column blocks that would fit, or None;
    columns: the input columns the map's parameters have a row for (None: all d)."""
    more_blocks = f"n_blocks={fitting_blocks}" if fitting_blocks else None
    fewer_features = ("fewer input columns (the linear kernel has s = d)"
                      if isinstance(fmap, Identity) else "fewer features (n_features)")
    largest = need.largest()
    if largest == "map parameters":
        tips = [f"{type(fmap).__name__} draws a {_parameter_rows(fmap, columns)} x s_j "
                f"matrix per block and thread: for rows this wide use the linear kernel, "
                f"or a linear sketch to a few thousand dimensions before the kernel map "
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


def _parameter_rows(fmap, columns):
    """How a refusal or warning names the rows of a map's d x s_j parameter matrices: d,
    or the columns in use of d when sparse rows use fewer (`operator_for_rows`)."""
    d = fmap.n_features_in_
    if columns is None or columns == d:
        return f"{d}"
    return f"{columns} (the columns in use of {d})"


def wide_input_message(need, fmap, columns=None):
    """A message for WideInputWarning when the map's own matrices exceed 1 GiB and four
    times the sweep's feature blocks, else None: for rows of d >> n_i columns, the random
    parameters of the sweep (a d x s_j matrix per block and thread, or u x s_j for sparse
    rows that use u of the d columns: `columns`) or a map's landmarks (Nystroem: a dense
    s x d matrix, even for sparse rows)."""
    sweep = need.sweep
    bound = max(2**30, 4 * sweep["feature blocks"])
    landmarks = need.persistent.get("map landmarks", 0)
    if sweep["map parameters"] > bound:
        what = (f"random parameters take {format_bytes(sweep['map parameters'])} (a "
                f"{_parameter_rows(fmap, columns)} x s_j matrix per block and thread)")
    elif landmarks > bound:
        what = (f"landmarks take {format_bytes(landmarks)} (a dense s x "
                f"{fmap.n_features_in_} matrix)")
    else:
        return None
    return (f"{type(fmap).__name__}'s {what} for feature blocks of "
            f"{format_bytes(sweep['feature blocks'])}: for rows this wide use the linear "
            f"kernel, or a linear sketch to a few thousand dimensions before the kernel map "
            f"(skylite.sketch.ComposedMap; docs/choosing_parameters.md, wide sparse rows)")
