"""The names of `skylite train`'s options beside the estimator parameters they set (no
numerical import: the command line's parser reads it before it loads anything)."""

__all__ = ["PARAMETERS"]

#: `skylite train` option (its dest) -> the estimator parameter it sets: the one table of
#: their names (the model is built from it; messages that name a parameter are rewritten
#: with its flag, skylite._commands._as_flags).  The kernels' parameters keep their names.
PARAMETERS = {"kernel": "kernel", "loss": "loss", "reg": "regularizer", "alpha": "alpha",
              "features": "n_features", "blocks": "n_blocks", "method": "method",
              "landmarks": "landmarks", "rho": "rho", "iters": "max_iter", "tol": "tol",
              "relaxation": "relaxation", "acceleration": "acceleration",
              "threads": "n_threads", "memory_budget": "memory_budget",
              "precision": "precision", "cache_precision": "cache_precision",
              "seed": "random_state", "checkpoint": "checkpoint",
              "checkpoint_every": "checkpoint_every", "early_stop": "early_stopping",
              "solver": "solver", "validation_fraction": "validation_fraction",
              "n_iter_no_change": "n_iter_no_change", "scoring": "scoring",
              "classification": "classification"}
