"""Saving and loading fitted kernel machines: a small portable file, no random numbers.

Layout (all little-endian):

    b"SKYLITE\\x00"                 8 bytes, magic
    uint32 version, uint32 header length H
    H bytes of UTF-8 JSON header      estimator class and parameters, the feature map's
                                      description (type, sizes, parameters, seed) and its
                                      features at a fixed probe row ("feature_map_probe"),
                                      loss, regularizer, classes, coef shape, and the
                                      model's outputs at that row ("outputs_probe")
    s * m float64                     coef_ (W), row-major
    the feature map's fitted arrays, float64 row-major, in the order the header's
    "feature_map_arrays" lists them (name, shape): Nystroem's landmarks (s x d) and
    whitening; none for the random maps
    (exact kernel models, header "dual": instead of coef_, dual_coef_ (n x m float64) and
     the training rows: dense n x d float64, or CSR indptr (n + 1 int64), indices (nnz
     int64), data (nnz float64))
    32 bytes                          SHA-256 of everything before it (format 2), checked
                                      by `load`: a damaged file is refused, never half read

The file is written atomically (skylite._files.atomic_write): a temporary file
``.<name>.<random>.tmp`` in the destination's folder, fsynced, then renamed over the
destination, so the previous model stays whole until the new one is complete, and a reader
never sees a mixture; the temporary files of a killed save are removed by the next save to
the same destination.

A random feature map is rebuilt from its seed (skylite.sketch.map_from_dict), so the file is
O(s m) whatever the map's parameter count; a map learned from data (Nystroem) adds the
arrays it learned, nothing random.  Format 1 (no "feature_map_arrays", no checksum) is still
read.  Pickling a model also works.

The checksum guards against damage, not against a file written on purpose: anyone can
recompute it.  So `load` also treats the file as untrusted input.  The header is bounded
before it is parsed (MAX_HEADER_BYTES, MAX_HEADER_DEPTH; integers below 2**64 in magnitude,
finite floats), every field is checked for its type and range where it is used, and the
parts must agree: coef_ is s x m with s the map's n_features and m the outputs the classes
need, the map's learned arrays are exactly those its description rebuilds (so their shapes
and the block layout agree), the map reproduces the probe features recorded at save (an
edited type, n_blocks, parameter or seed does not), the exact kernel model's arrays have
the sizes its header gives and well formed CSR rows, and its kernel reproduces the outputs
recorded at save at a few of its training rows ("probe" in "dual": an edited kernel type or
parameter does not), and the whole model reproduces its outputs at the probe row, shape
included (so a field that no array can check, such as "targets_1d", cannot be edited
alone).  Any fault is a ValueError naming the file and the fault.  A file whose parts all
agree is a model, whoever wrote it.  There is no separate digest of the arrays: the
whole-file checksum already covers them against damage, and against a forger any digest is
as recomputable as the checksum itself (files whose Nystroem description carries an
"arrays_sha256" still load; the field is ignored).
Files written before the probe are checked for everything but it.

This module knows the file, not the estimator classes: `KernelMachine.save` calls `save`, and
`skylite.load` (skylite.estimators.load) calls `load` with the classes a file may name.
"""
import hashlib
import json
import math
import os
import re
import struct

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from . import kernels, sketch
from ._files import atomic_write, check_file_path
from ._machine import available_memory_bytes, format_bytes
from ._validation import MAX_INTEGER as MAX_COUNT
from ._validation import check_positive, sparse_structure_checked
from .prox import RKHSNorm, get_loss, get_regularizer

MAGIC = b"SKYLITE\x00"
VERSION = 2
READABLE_VERSIONS = (1, 2)
#: bounds checked before a header is parsed
MAX_HEADER_BYTES = 64 * 2**20
MAX_HEADER_DEPTH = 32
#: the feature map's fingerprint: its features of a fixed row at this many columns, which a
#: reloaded map must reproduce to this relative tolerance (rounding differs across machines)
PROBE_FEATURES = 32
PROBE_RTOL = 1e-6

_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_OPENING = np.frombuffer(b"[{", dtype=np.uint8)
_CLOSING = np.frombuffer(b"]}", dtype=np.uint8)
_JSON_NAMES = {str: "string", int: "integer", bool: "boolean", list: "array",
               dict: "object", float: "number"}


def save(model, path):
    """Write the fitted `model` (a skylite.KernelMachine) to `path`; ValueError for an empty
    path, IsADirectoryError for a folder, an OSError naming `path` if it cannot be written."""
    check_file_path(path)
    check_is_fitted(model, "coef_")
    params = dict(model.get_params(deep=False))
    objects = {}
    for key in ("kernel", "feature_map"):          # objects given as parameters
        value = params.pop(key)
        if value is None or isinstance(value, str):
            params[key] = value
        elif isinstance(value, kernels.Kernel):
            objects[key] = value.to_dict()
        else:
            objects[key] = {"type": type(value).__name__, "params": _object_params(value)}
    params.pop("callback")
    params["comm"] = None                          # belongs to the running MPI job
    if params.get("checkpoint") is not None:
        params["checkpoint"] = os.fspath(params["checkpoint"])
    dropped = sorted(k for k, v in params.items() if not _is_json(v))
    if dropped:
        raise ValueError(f"cannot save parameters {dropped}: not representable in JSON")
    header = {
        "estimator": type(model).__name__,
        "params": params,
        "objects": objects,
        "feature_map": model.feature_map_.to_dict(),
        "feature_map_probe": map_probe(model.feature_map_),
        "loss": {"name": model.loss_.name, "params": model.loss_.get_params()},
        "regularizer": model.regularizer_.name,
        "coef_shape": list(model.coef_.shape) if model.coef_ is not None else [0, 0],
        "n_iter": int(model.n_iter_),
        "converged": bool(model.converged_),
        "alpha": float(model.alpha_),
        "sigma": None if model.sigma_ is None else float(model.sigma_),
        "method": getattr(model, "method_", None),
        "precision": model.precision_,
        "targets_1d": bool(getattr(model, "_y_1d", False)),
    }
    if hasattr(model, "feature_names_in_"):
        header["feature_names"] = [str(name) for name in model.feature_names_in_]
    if hasattr(model, "classes_"):
        classes = model.classes_
        header["classes"] = {"dtype": classes.dtype.str, "values": classes.tolist()}
    arrays = [model.coef_] if model.coef_ is not None else []
    if getattr(model, "dual_coef_", None) is not None:
        X = model.X_fit_
        header["dual"] = {"kernel": model.kernel_.to_dict(),
                          "shape": list(model.dual_coef_.shape), "n_features": X.shape[1],
                          "nnz": int(X.nnz) if sp.issparse(X) else None,
                          "probe": dual_probe(model.kernel_, model.dual_coef_, X)}
        arrays = [model.dual_coef_] + ([X.indptr, X.indices, X.data] if sp.issparse(X)
                                       else [X])
    map_arrays = model.feature_map_.fitted_arrays()          # they end the body
    header["feature_map_arrays"] = [[name, list(np.shape(a))] for name, a in map_arrays.items()]
    arrays += list(map_arrays.values())
    header["outputs_probe"] = outputs_probe(model)
    blob = json.dumps(header).encode("utf-8")

    def write(f):
        digest = hashlib.sha256()
        for part in _parts(blob, arrays):
            digest.update(part)
            f.write(part)
        f.write(digest.digest())
    atomic_write(path, write)


def _parts(blob, arrays):
    """The bytes of a model file before its checksum: magic, version, header, arrays."""
    yield MAGIC + struct.pack("<II", VERSION, len(blob)) + blob
    for array in arrays:
        dtype = "<i8" if np.issubdtype(array.dtype, np.integer) else "<f8"
        yield memoryview(np.ascontiguousarray(array, dtype=dtype)).cast("B")


def load(path, estimators):
    """Read a model written by `save`; raises FileNotFoundError ("no such file: ...") for a
    missing file and ValueError naming the file and the fault for a damaged, foreign or
    inconsistent one (e.g. an unknown loss, or a header that disagrees with its arrays).

    estimators: {class name: class} of the estimator classes a file may name.
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        raise IsADirectoryError(f"{path} is a folder, not a skylite model file")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such file: {path}")
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != MAGIC or len(data) < 16:
        raise ValueError(f"{path} is not a skylite model file")
    version, length = struct.unpack("<II", data[8:16])
    if version not in READABLE_VERSIONS:
        raise ValueError(f"{path} is a skylite model of format {version}; this skylite "
                         f"reads formats {', '.join(map(str, READABLE_VERSIONS))}")
    if version >= 2:              # a SHA-256 of everything before it ends the file
        data, stored = data[:-32], data[-32:]
        if len(stored) < 32 or hashlib.sha256(data).digest() != stored:
            raise ValueError(f"{path} is a corrupted skylite model file: its checksum does "
                             f"not match its contents (a damaged or truncated copy)")
    try:
        header = parse_header(data[16:16 + length], length)
        return _model(header, data[16 + length:], estimators)
    except (KeyError, TypeError, ValueError, AttributeError, UnicodeDecodeError,
            OverflowError) as exc:
        raise ValueError(f"{path} is a corrupted skylite model file: {exc}") from None


def parse_header(blob, length):
    """The header dict from its bytes, bounded before it is parsed: its `length` (as the
    file states it) at most MAX_HEADER_BYTES and within the file, JSON
    nested at most MAX_HEADER_DEPTH deep, finite numbers, integers below 2**64 in
    magnitude.  ValueError says which bound a header breaks."""
    if length > MAX_HEADER_BYTES or length > len(blob):
        raise ValueError(f"header too large: {length} bytes (at most {MAX_HEADER_BYTES}, "
                         f"and within the file's {len(blob)})")
    depth = _nesting_depth(blob)
    if depth > MAX_HEADER_DEPTH:
        raise ValueError(f"header too deeply nested: {depth} levels (at most "
                         f"{MAX_HEADER_DEPTH})")
    try:
        header = json.loads(blob.decode("utf-8"), parse_int=_header_int,
                            parse_float=_header_float, parse_constant=_header_constant)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"the header is not UTF-8 JSON ({exc})") from None
    if not isinstance(header, dict):
        raise ValueError(f"the header is a JSON {type(header).__name__}, not an object")
    return header


def _nesting_depth(blob):
    """The deepest nesting of [ and { in JSON bytes, strings aside (an unterminated string
    counts as text, which can only overstate the depth)."""
    text = np.frombuffer(_JSON_STRING.sub(b'""', blob), dtype=np.uint8)
    steps = (np.isin(text, _OPENING).astype(np.int64)
             - np.isin(text, _CLOSING).astype(np.int64))
    return int(np.cumsum(steps).max(initial=0))


def _header_int(text):
    if len(text) > 20 or abs(int(text)) >= 2**64:
        raise ValueError(f"header integer {text[:24]} out of range (|n| < 2**64)")
    return int(text)


def _header_float(text):
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"header number {text[:24]} is not a finite float64")
    return value


def _header_constant(text):
    raise ValueError(f"header number {text} is not finite")


def _model(header, body, estimators):
    """The fitted estimator a parsed header and the arrays after it describe, after checking
    that the header's fields have the right types and ranges and agree with the arrays."""
    cls = estimators.get(_field(header, "estimator", str))
    if cls is None:
        raise ValueError(f"unknown estimator {header['estimator']!r}")
    s, m = _shape(_field(header, "coef_shape", list), 2, "coef_shape")
    specs = [_array_spec(spec) for spec in _field(header, "feature_map_arrays", list,
                                                  default=[])]
    body, map_arrays = _split_map_arrays(specs, body)
    dual = _field(header, "dual", dict, default=None)
    if dual is not None:
        if (s, m) != (0, 0):
            raise ValueError(f"an exact kernel model has coef_shape [0, 0], not [{s}, {m}]")
        # before the rows are read: an edited width would make the probes' work grow with it
        d = _field(dual, "n_features", int, "dual")
        d_map = _field(_field(header, "feature_map", dict), "n_features_in", int,
                       "feature_map")
        if d != d_map:
            raise ValueError(f"the training rows have {d} columns, the feature map {d_map}")
        kernel, dual_coef, X_fit = _load_dual(dual, body)
        m = dual_coef.shape[1]
    elif s == 0 or m == 0:
        raise ValueError(f"coef_shape [{s}, {m}] is empty")
    elif len(body) != 8 * s * m:
        raise ValueError(f"weights have {len(body)} bytes, coef_shape [{s}, {m}] needs "
                         f"{8 * s * m}")

    params = dict(_field(header, "params", dict))
    allowed = set(cls._get_param_names())
    for key, spec in _field(header, "objects", dict, default={}).items():
        if key not in ("kernel", "feature_map"):
            raise ValueError(f"objects has an unknown entry {key!r}")
        params[key] = _rebuild_object(key, _checked(spec, dict, f"objects[{key!r}]"))
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise ValueError(f"params has entries {unknown} that {cls.__name__} does not take")
    model = cls(**params)
    model._engine_settings()          # the options a prediction reads, range-checked

    fmap = sketch.map_from_dict(_field(header, "feature_map", dict), arrays=map_arrays)
    if (dual is not None and params.get("feature_map") is None
            and isinstance(model.n_features, int) and fmap.n_features > model.n_features):
        # W's rows bound the map of a random-feature model; an exact model's map is made
        # from n_features (at most that many), and its probe costs what the map's size does
        raise ValueError(f"the feature map has {fmap.n_features} features, more than the "
                         f"model's n_features={model.n_features}")
    _check_map(fmap, map_arrays, header, s if dual is None else None)
    model.feature_map_ = fmap
    loss = _field(header, "loss", dict)
    model.loss_ = get_loss(_field(loss, "name", str, "loss"),
                           **_field(loss, "params", dict, "loss"))
    regularizer = _field(header, "regularizer", str)
    model.regularizer_ = (RKHSNorm(fmap) if regularizer == "rkhs"
                          else get_regularizer(regularizer))
    if dual is not None:
        if X_fit.shape[1] != fmap.n_features_in_:
            raise ValueError(f"the training rows have {X_fit.shape[1]} columns, the feature "
                             f"map {fmap.n_features_in_}")
        model.coef_ = None
        model.kernel_, model.dual_coef_, model.X_fit_ = kernel, dual_coef, X_fit
    else:
        model.coef_ = np.frombuffer(body, dtype="<f8").reshape(s, m).astype(np.float64)
    model.n_features_in_ = fmap.n_features_in_
    model.n_iter_ = _count(_field(header, "n_iter", int), "n_iter")
    model.converged_ = _field(header, "converged", bool)
    # the alpha and bandwidth fitted (files before C and "scale" have neither: alpha then)
    model.alpha_ = check_positive(header.get("alpha", model.alpha), "header['alpha']",
                                  allow_zero=True)
    sigma = header.get("sigma")
    model.sigma_ = None if sigma is None else check_positive(sigma, "header['sigma']")
    model.method_ = _field(header, "method", str, default=None)  # None: a user's map
    # the precision fitted (files before precision="auto" have their parameter's)
    model.precision_ = _field(header, "precision", str, default=model.precision)
    if model.precision_ not in ("float32", "float64"):
        raise ValueError(f"precision must be 'float32' or 'float64', got "
                         f"{model.precision_!r}")
    model._y_1d = _field(header, "targets_1d", bool)
    if model._y_1d and m != 1:
        raise ValueError(f"targets_1d is true but the model has {m} outputs")
    names = _field(header, "feature_names", list, default=None)
    if names is not None:
        if len(names) != fmap.n_features_in_ or not all(isinstance(n, str) for n in names):
            raise ValueError(f"feature_names must be {fmap.n_features_in_} strings, the "
                             f"number of input columns")
        model.feature_names_in_ = np.array(names, dtype=object)
    classes = _field(header, "classes", dict, default=None)
    if classes is not None:
        model.classes_ = _classes(classes, m)
    if model.is_classifier != (classes is not None):    # the loss parameter resolves
        raise ValueError("its loss parameter and its classes disagree")
    _check_outputs(model, header)
    return model


def _check_map(fmap, arrays, header, s):
    """Refuse a feature map whose description disagrees with the arrays saved with it: its
    learned arrays must be exactly those in the file, its width W's s rows, and its features
    of the probe row those recorded at save (any edit of the map's type, sizes, block
    layout, parameters or seed changes them)."""
    rebuilt = fmap.fitted_arrays()
    if set(rebuilt) != set(arrays) or not all(
            np.array_equal(rebuilt[name], arrays[name]) for name in arrays):
        raise ValueError(f"the feature map's description (e.g. its n_blocks) disagrees with "
                         f"its arrays {sorted(arrays)}; it expects {sorted(rebuilt)} of "
                         f"shapes {[np.shape(a) for a in rebuilt.values()]}")
    if s is not None and fmap.n_features != s:
        raise ValueError(f"the feature map has {fmap.n_features} features but W has {s} "
                         f"rows")
    op = fmap.transform_op_
    need = 8 * max(op.n_params(j) for j in range(op.n_blocks))
    available = available_memory_bytes()
    if need > available:        # what transforming a row would allocate first
        raise ValueError(f"the feature map described in the header needs "
                         f"{format_bytes(need)} for the parameters of one block, more than "
                         f"the {format_bytes(available)} available (an edited n_features_in "
                         f"or n_features, or a model for a larger machine)")
    probe = _field(header, "feature_map_probe", list, default=None)
    if probe is None:                # files written before the probe: nothing to compare
        return
    if not _agrees(probe, map_probe(fmap)):
        raise ValueError("the feature map described in the header does not give the "
                         "features it was saved with (an edited map description: type, "
                         "n_features, n_blocks, parameters or seed)")


def map_probe(fmap):
    """The features of a fitted map at a fixed probe row, at PROBE_FEATURES columns spread
    evenly over its s features: a fingerprint of the map stored in the model file.

    The probe row has at most 16 nonzeros in [0.25, 0.75), evenly spaced over the d columns
    (a CSR row, cheap whatever d)."""
    picked = _spread(fmap.n_features, PROBE_FEATURES)
    return fmap.transform(probe_row(fmap.n_features_in_), n_threads=1)[0, picked].tolist()


def _spread(n, k):
    """At most k distinct indices of 0..n-1, evenly spaced from the first to the last."""
    return np.unique(np.linspace(0, n - 1, min(n, k)).round().astype(np.int64))


def probe_row(d):
    """The probe row of `map_probe` and `outputs_probe`: a 1 x d CSR row with at most 16
    nonzeros in [0.25, 0.75), evenly spaced over the d columns (cheap whatever d)."""
    columns = _spread(d, 16)
    values = 0.25 + 0.5 * np.arange(len(columns)) / len(columns)
    return sp.csr_matrix((values, columns, [0, len(columns)]), shape=(1, d))


def outputs_probe(model):
    """The fitted model's outputs at the probe row (z(x) W, or K(x, X_fit) dual_coef),
    raveled as its predictions are for 1-D targets: values and shape, a fingerprint of the
    whole model stored in the model file, so that a header field no array can check (e.g.
    "targets_1d") cannot be edited alone."""
    O = model._model_outputs(probe_row(model.n_features_in_))
    return (O.ravel() if getattr(model, "_y_1d", False) else O).astype(np.float64).tolist()


def _check_outputs(model, header):
    """Refuse a model whose outputs at the probe row differ from those recorded at save
    (files written before the outputs probe: nothing to compare)."""
    probe = header.get("outputs_probe")
    if probe is not None and not _agrees(probe, outputs_probe(model)):
        raise ValueError("the header does not give the outputs the model was saved with (an "
                         "edited field, e.g. targets_1d or a parameter)")


def _agrees(recorded, expected):
    """Whether a probe recorded in the header (nested lists of floats) has the shape of
    `expected` (nested lists, as the probe functions return them) and its values to
    PROBE_RTOL, relative to the largest of them (at least 1)."""
    expected = np.asarray(expected, dtype=np.float64)
    try:
        values = np.asarray(recorded, dtype=np.float64)
    except (TypeError, ValueError):             # ragged lists, strings, objects
        return False
    if values.shape != expected.shape:
        return False
    flat = recorded
    for _ in range(expected.ndim - 1):
        flat = [v for row in flat for v in row]
    return (all(isinstance(v, float) for v in flat)
            and np.allclose(values, expected, rtol=PROBE_RTOL,
                            atol=PROBE_RTOL * np.abs(expected).max(initial=1.0)))


def _field(mapping, key, kind, where="header", **default):
    """mapping[key] checked to be a `kind` (bool is not an int); `default` if given and the
    key is missing or None."""
    if key not in mapping or (mapping[key] is None and default):
        if default:
            return default["default"]
        raise ValueError(f"{where} has no {key!r}")
    return _checked(mapping[key], kind, f"{where}[{key!r}]")


def _checked(value, kind, name):
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"{name} must be a JSON {_JSON_NAMES[kind]}, got "
                         f"{type(value).__name__} {str(value)[:40]}")
    return value


def _count(value, name):
    """An int in [0, MAX_COUNT] (sizes, counts), or ValueError naming it."""
    _checked(value, int, name)
    if not 0 <= value <= MAX_COUNT:
        raise ValueError(f"{name} = {value} is outside [0, {MAX_COUNT}]")
    return value


def _shape(value, ndim, name):
    if not isinstance(value, list) or len(value) != ndim:
        raise ValueError(f"{name} must be a list of {ndim} sizes, got {str(value)[:40]}")
    return tuple(_count(v, f"{name}[{k}]") for k, v in enumerate(value))


def _array_spec(spec):
    """(name, shape) of one entry of feature_map_arrays."""
    if not isinstance(spec, list) or len(spec) != 2 or not isinstance(spec[0], str) \
            or not isinstance(spec[1], list) or len(spec[1]) > 4:
        raise ValueError(f"feature_map_arrays entries must be [name, shape], got "
                         f"{str(spec)[:60]}")
    return spec[0], _shape(spec[1], len(spec[1]), f"the shape of {spec[0]!r}")


def _classes(spec, m):
    """classes_ from the header's {"dtype", "values"}: scalars of a numeric, boolean or
    string dtype, represented exactly, distinct, and as many as the model's outputs need
    (m columns, one per class; two classes may share one)."""
    dtype, values = _field(spec, "dtype", str, "classes"), _field(spec, "values", list,
                                                                "classes")
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise ValueError(f"classes dtype {dtype[:24]!r} is not a numpy dtype") from None
    if dtype.kind not in "biufUO" or (dtype.kind == "O" and dtype.str != "|O"):
        raise ValueError(f"classes dtype {dtype.str!r} is not numeric, boolean or text")
    if not all(isinstance(v, (str, int, float)) for v in values):
        raise ValueError("classes values must be numbers or strings")
    try:
        classes = np.array(values, dtype=dtype)
    except (OverflowError, TypeError, ValueError):
        raise ValueError(f"classes values do not fit their dtype {dtype.str}") from None
    if classes.ndim != 1 or classes.tolist() != values:
        raise ValueError(f"classes values are not represented exactly by their dtype "
                         f"{dtype.str}")
    if len(set(values)) != len(values):
        raise ValueError("classes values repeat")
    if len(values) < 2 or m not in (len(values), 1 if len(values) == 2 else len(values)):
        raise ValueError(f"{len(values)} classes but the model has {m} outputs")
    return classes


def _object_params(obj):
    if isinstance(obj, sketch.FeatureMap):
        params = obj._json_params()            # maps inside maps (ComposedMap) as specs
    else:
        params = obj.get_params() if hasattr(obj, "get_params") else dict(vars(obj))
    if not _is_json(params):
        raise ValueError(f"cannot save {type(obj).__name__} parameters {params!r}")
    return params


def _split_map_arrays(specs, body):
    """(the rest of the body, {name: float64 array}) of the feature map's arrays, which
    end the body."""
    sizes = [math.prod(shape) for _, shape in specs]
    total = 8 * sum(sizes)
    if total > len(body):
        raise ValueError(f"the feature map's arrays need {total} bytes, the file has "
                         f"{len(body)} after its header")
    if len({name for name, _ in specs}) != len(specs):
        raise ValueError("feature_map_arrays names an array twice")
    start = len(body) - total
    arrays = {}
    for (name, shape), size in zip(specs, sizes):
        arrays[name] = np.frombuffer(body, dtype="<f8", count=size,
                                     offset=start).reshape(shape).astype(np.float64)
        start += 8 * size
    return body[:len(body) - total], arrays


def _load_dual(spec, body):
    """(kernel, dual_coef_, X_fit_) of an exact kernel model from its header and body; the
    sizes must match the body's length and the training rows, if sparse, must be a well
    formed CSR matrix."""
    n, m = _shape(_field(spec, "shape", list, "dual"), 2, "dual shape")
    d = _count(_field(spec, "n_features", int, "dual"), "dual n_features")
    nnz = spec.get("nnz")
    if nnz is not None:
        nnz = _count(nnz, "dual nnz")
    if min(n, m, d) == 0:
        raise ValueError(f"an exact kernel model of shape [{n}, {m}] over {d} columns is "
                         f"empty")
    sizes = [n * m] + ([n + 1, nnz, nnz] if nnz is not None else [n * d])
    if len(body) != 8 * sum(sizes):
        raise ValueError(f"arrays have {len(body)} bytes, the dual shape [{n}, {m}] and "
                         f"training rows need {8 * sum(sizes)}")
    parts, start = [], 0
    for size, dtype in zip(sizes, ["<f8"] + (["<i8", "<i8", "<f8"] if nnz is not None
                                            else ["<f8"])):
        parts.append(np.frombuffer(body, dtype=dtype, count=size, offset=8 * start).copy())
        start += size
    dual = parts[0].reshape(n, m)
    if nnz is None:
        X = parts[1].reshape(n, d)
    else:
        X = sp.csr_matrix((n, d))
        X.data, X.indices, X.indptr = parts[3], parts[2], parts[1]    # not yet trusted
        sparse_structure_checked(X, "the training rows")
        X = sp.csr_matrix((parts[3], parts[2].astype(np.int32), parts[1]), shape=(n, d))
    kernel = _rebuild_object("kernel", _field(spec, "kernel", dict, "dual"))
    probe = _field(spec, "probe", list, "dual", default=None)
    if probe is not None:            # files written before the probe: nothing to compare
        if not _agrees(probe, dual_probe(kernel, dual, X)):
            raise ValueError("the kernel described in the header does not give the outputs "
                             "the model was saved with (an edited kernel type or parameter)")
    return kernel, dual, X


def dual_probe(kernel, dual_coef, X_fit):
    """The outputs K(X_p, X_fit) dual_coef of an exact kernel model at up to PROBE_FEATURES
    of its training rows X_p, spread evenly over them: a fingerprint of its kernel (type and
    parameters) stored in the model file.  At a training row the output holds that row's
    own term, so it does not vanish however narrow the kernel."""
    picked = _spread(X_fit.shape[0], PROBE_FEATURES)
    X = X_fit.astype(np.float64)
    return (kernel.gram(X[picked], X) @ dual_coef).ravel().tolist()


def _rebuild_object(key, spec):
    if key == "feature_map":
        return sketch.map_from_spec(spec)
    return kernels.Kernel.from_dict(spec)


def _is_json(value):
    try:
        json.dumps(value)
        return True
    except (TypeError, ValueError):
        return False
