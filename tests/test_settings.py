"""EngineSettings: one declaration per engine option, read by the engine, the estimators and
the CLI, so that no default or choice is written twice."""
import dataclasses

import pytest

from skylite import KernelLogisticRegression, KernelMachine, KernelSVC
from skylite.admm import BlockADMM
from skylite.admm.settings import DEFAULTS, EngineSettings
from skylite._flags import PARAMETERS
from skylite.cli import _LATER, build_parser
from skylite.prox import get_loss, get_regularizer
from skylite.sketch import GaussianRFF

# `skylite train` option (dest) -> the KernelMachine parameter it sets: the CLI's own table
# (the options whose default is filled in later are checked through _LATER)
CLI_PARAMETERS = {dest: param for dest, param in PARAMETERS.items()
                  if dest not in _LATER and dest not in ("loss", "landmarks", "method",
                                                         "classification")}


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


@pytest.mark.parametrize("cls", [KernelMachine, KernelSVC, KernelLogisticRegression])
def test_the_docstring_states_every_parameters_default(cls):
    """Each parameter's entry in the estimators' docstring names the default get_params()
    has, so that the text cannot drift from the one place the default is written."""
    import re
    params = cls().get_params()
    stated = dict(re.findall(r"^(\w+) : .*, default=(.+)$", cls.__doc__, re.M))
    assert set(params) <= set(stated)
    for name, value in params.items():
        text = f'"{value}"' if isinstance(value, str) else repr(value)
        assert stated[name] == text, name


# ---- every option's value checked in one place, whatever the caller gives ----

from hypothesis import given, settings as hypothesis_settings, strategies as st  # noqa: E402

JUNK = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70),
                 st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=6),
                 st.sampled_from(["False", "auto", "rows", "float32", b"x", (1,), [2.0]]))


@hypothesis_settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(EngineSettings.names()), value=JUNK)
def test_any_option_value_is_stored_or_refused_naming_the_option(name, value):
    """A generated value of any option is accepted (and then stored as checked) or refused
    with a ValueError that names the option: never another exception, never coerced
    silently from a string."""
    try:
        settings = EngineSettings(**{name: value})
    except ValueError as exc:
        assert name in str(exc)
        return
    stored = getattr(settings, name)
    if isinstance(value, str) and name != "checkpoint":
        assert stored == value                     # a choice, never a string read as a bool
    accepts = {f.name: f.metadata["accepts"] for f in dataclasses.fields(EngineSettings)}
    if getattr(accepts[name], "integer", False) and stored is not None:
        assert 0 < stored <= 2**31 - 1                 # what native code holds


@pytest.mark.parametrize("name, value, message", [
    ("max_iter", 2**64, "max_iter must be an integer > 0 and at most 2147483647"),
    ("adapt_rho", "False", "adapt_rho must be True or False"),
    ("rho", 1e300, "rho must lie in (1e-08, 1e+08)"),
    ("rho", 1e-300, "rho must lie in (1e-08, 1e+08)"),
    ("alpha", 10**400, "alpha must be finite"),
])
def test_out_of_range_options_name_themselves(name, value, message):
    with pytest.raises(ValueError) as info:
        EngineSettings(**{name: value})
    assert message in str(info.value)
    assert EngineSettings(verbose=2).verbose is True           # verbosity levels are on/off


def test_engine_takes_loss_names_and_refuses_an_unfitted_map(pendigits):
    X = pendigits[0][:200] / 100.0
    with pytest.raises(ValueError, match="feature_map must be a fitted skylite.sketch map"):
        BlockADMM(GaussianRFF(16), "hinge", "l2", 1e-3)
    fmap = GaussianRFF(16, sigma=0.6).fit(X)
    engine = BlockADMM(fmap, "hinge", "l2", 1e-3, max_iter=3)
    assert engine.loss.name == "hinge" and engine.regularizer.name == "l2"


def test_cli_refuses_a_size_that_is_not_a_finite_number(capsys):
    for text in ("inf", "nan", "1e999", "abc"):
        with pytest.raises(SystemExit):
            train_args("--memory-budget", text)
        assert "not a size" in capsys.readouterr().err
