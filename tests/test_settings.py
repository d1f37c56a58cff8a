"""EngineSettings: one declaration per engine option, read by the engine, the estimators and
the CLI, so that no default or choice is written twice."""
import dataclasses

import pytest

from skylite import KernelMachine
from skylite.admm import BlockADMM
from skylite.admm.settings import DEFAULTS, EngineSettings
from skylite.cli import _LATER, build_parser
from skylite.prox import get_loss, get_regularizer
from skylite.sketch import GaussianRFF

# `skylite train` option (dest) -> the KernelMachine parameter it sets
CLI_PARAMETERS = {"kernel": "kernel", "reg": "regularizer", "alpha": "alpha",
                  "iters": "max_iter", "tol": "tol", "solver": "solver", "rho": "rho",
                  "relaxation": "relaxation", "acceleration": "acceleration",
                  "threads": "n_threads", "memory_budget": "memory_budget",
                  "precision": "precision", "seed": "random_state",
                  "early_stop": "early_stopping", "blocks": "n_blocks",
                  "checkpoint": "checkpoint"}


def train_args(*options):
    parser = build_parser(("train",))
    args = parser.parse_args(["train", "data.svm", "-m", "model.npz", *options])
    args.check(args, parser._subparsers._group_actions[0].choices["train"])
    return args


def test_the_cli_defaults_are_the_estimators():
    """Every train option that sets an estimator parameter defaults to that parameter's
    default, including the options filled in after the applicability check (`_LATER`)."""
    params = KernelMachine().get_params()
    args = train_args()
    for dest, param in CLI_PARAMETERS.items():
        value = getattr(args, dest)
        value = None if (dest == "acceleration" and value == "none") else value
        assert value == params[param], dest
    for dest, param in _LATER.items():
        assert getattr(args, dest) == params[param], dest
    assert args.loss == KernelMachine._default_loss


def test_the_cli_choices_are_the_engines():
    parser = build_parser(("train",))
    train = parser._subparsers._group_actions[0].choices["train"]
    choices = {a.dest: a.choices for a in train._actions if a.choices}
    assert tuple(choices["precision"]) == EngineSettings.choices("precision")
    assert tuple(choices["acceleration"]) == tuple(
        "none" if c is None else c for c in EngineSettings.choices("acceleration"))


def test_the_estimators_engine_options_default_to_the_settings():
    params = KernelMachine().get_params()
    shared = [name for name in EngineSettings.names() if name in params]
    assert len(shared) >= 14
    for name in shared:
        assert params[name] == getattr(DEFAULTS, name), name
    settings = KernelMachine(rho=3.0, tol=1e-5)._engine_settings(memory_budget=7)
    assert (settings.rho, settings.tol, settings.memory_budget) == (3.0, 1e-5, 7)


def test_settings_are_frozen_checked_and_documented():
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULTS.rho = 2.0
    for name, bad in [("rho", 0), ("max_iter", 1.5), ("relaxation", 2.0), ("sweep", "up"),
                      ("acceleration", "nesterov"), ("memory_budget", -1)]:
        with pytest.raises(ValueError, match=name):
            EngineSettings(**{name: bad})
    for name in EngineSettings.names():
        entry = EngineSettings.doc(name)
        assert entry.startswith(f"{name} : ") and "default=" in entry
        assert entry in KernelMachine.__doc__ or name in ("n_row_blocks", "sweep")


def test_the_engine_takes_settings_or_keywords(pendigits):
    X = pendigits[0][:200] / 100.0
    fmap = GaussianRFF(32, sigma=0.6, n_blocks=2).fit(X)
    loss, reg = get_loss("hinge"), get_regularizer("l2")
    settings = EngineSettings(alpha=1e-3, max_iter=7, relaxation=1.5)
    by_object = BlockADMM(fmap, loss, reg, settings)
    by_keywords = BlockADMM(fmap, loss, reg, 1e-3, max_iter=7, relaxation=1.5)
    assert by_object.settings == by_keywords.settings
    assert (by_object.max_iter, by_object.relaxation, by_object.acceleration) == (7, 1.5, None)
    with pytest.raises(TypeError):
        BlockADMM(fmap, loss, reg, settings, max_iter=3)
    assert settings.resolved(get_loss("squared")).acceleration == "anderson"
    assert settings.collective()["checkpoint"] is False


def test_a_loss_checks_its_targets_in_public():
    """check_targets is what the engine calls once before its nogil kernels."""
    import numpy as np
    get_loss("hinge").check_targets(np.array([[1.0], [-1.0]]))
    with pytest.raises(ValueError, match="HingeLoss"):
        get_loss("hinge").check_targets(np.array([[0.5], [-1.0]]))
    with pytest.raises(ValueError, match="NaN"):
        get_loss("squared").check_targets(np.array([[np.nan]]))


def test_the_allreduce_layout_reads_back_what_it_packed():
    import numpy as np
    from skylite.admm.run import SumsLayout
    n = 6
    layout = SumsLayout(n, 2, 3)
    packed = layout.pack([np.arange(n), np.array([7.0, 8.0]), np.array([1.0, 2.0, 3.0])])
    assert len(packed) == layout.size == n + 6
    assert list(packed[layout.validation]) == [7, 8] and list(packed[layout.dots]) == [1, 2, 3]
    assert packed[layout.failed] == 0 and layout.pack(None)[layout.failed] == 1


def test_the_docstring_states_every_parameters_default():
    """Each parameter's entry in the estimators' docstring names the default get_params()
    has, so that the text cannot drift from the one place the default is written."""
    import re
    params = KernelMachine().get_params()
    stated = dict(re.findall(r"^(\w+) : .*, default=(.+)$", KernelMachine.__doc__, re.M))
    assert set(params) <= set(stated)
    for name, value in params.items():
        text = f'"{value}"' if isinstance(value, str) else repr(value)
        assert stated[name] == text, name
