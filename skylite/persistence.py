"""Saving and loading fitted kernel machines: a small portable file, no random numbers.

Layout (all little-endian):

    b"SKYLITE\\x00"                 8 bytes, magic
    uint32 version, uint32 header length H
    H bytes of UTF-8 JSON header      estimator class and parameters, the feature map's
                                      description (type, sizes, parameters, seed), loss,
                                      regularizer, classes, coef shape
    s * m float64                     coef_ (W), row-major
    the feature map's fitted arrays, float64 row-major, in the order the header's
    "feature_map_arrays" lists them (name, shape): Nystroem's landmarks (s x d) and
    whitening; none for the random maps
    (exact kernel models, header "dual": instead of coef_, dual_coef_ (n x m float64) and
     the training rows: dense n x d float64, or CSR indptr (n + 1 int64), indices (nnz
     int64), data (nnz float64))
    32 bytes                          SHA-256 of everything before it (format 2), checked
                                      by `load`: a damaged file is refused, never half read

The file is written atomically (skylite._files.atomic_write): a temporary file in the same
folder, fsynced, then renamed over the destination, so the previous model stays whole until
the new one is complete, and a reader never sees a mixture.

A random feature map is rebuilt from its seed (skylite.sketch.map_from_dict), so the file is
O(s m) whatever the map's parameter count; a map learned from data (Nystroem) adds the
arrays it learned, nothing random.  Format 1 (no "feature_map_arrays", no checksum) is still read.
Pickling a model also works.

This module knows the file, not the estimator classes: `KernelMachine.save` calls `save`, and
`skylite.load` (skylite.estimators.load) calls `load` with the classes a file may name.
"""
import hashlib
import json
import os
import struct

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from . import kernels, sketch
from ._files import atomic_write
from .prox import RKHSNorm, get_loss, get_regularizer

MAGIC = b"SKYLITE\x00"
VERSION = 2
READABLE_VERSIONS = (1, 2)


def save(model, path):
    """Write the fitted `model` (a skylite.KernelMachine) to `path`."""
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
        "loss": {"name": model.loss_.name, "params": model.loss_.get_params()},
        "regularizer": model.regularizer_.name,
        "coef_shape": list(model.coef_.shape) if model.coef_ is not None else [0, 0],
        "n_iter": int(model.n_iter_),
        "converged": bool(model.converged_),
        "alpha": float(model.alpha_),
        "sigma": None if model.sigma_ is None else float(model.sigma_),
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
                          "nnz": int(X.nnz) if sp.issparse(X) else None}
        arrays = [model.dual_coef_] + ([X.indptr, X.indices, X.data] if sp.issparse(X)
                                       else [X])
    map_arrays = model.feature_map_.fitted_arrays()          # they end the body
    header["feature_map_arrays"] = [[name, list(np.shape(a))] for name, a in map_arrays.items()]
    arrays += list(map_arrays.values())
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
    missing file and ValueError for a corrupted or foreign one (e.g. an unknown loss).

    estimators: {class name: class} of the estimator classes a file may name.
    """
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
        header = json.loads(data[16:16 + length].decode("utf-8"))
        s, m = header["coef_shape"]
        cls = estimators.get(header["estimator"])
        if cls is None:
            raise ValueError(f"unknown estimator {header['estimator']!r}")
        body = data[16 + length:]
        body, map_arrays = _split_map_arrays(header.get("feature_map_arrays", []), body)
        if "dual" in header:
            body = _load_dual(header["dual"], body)
        elif len(body) != 8 * s * m:
            raise ValueError(f"weights have {len(body)} bytes, expected {8 * s * m}")
        params = dict(header["params"])
        for key, spec in header.get("objects", {}).items():
            params[key] = _rebuild_object(key, spec)
        model = cls(**params)
        model.feature_map_ = sketch.map_from_dict(header["feature_map"], arrays=map_arrays)
        model.loss_ = get_loss(header["loss"]["name"], **header["loss"]["params"])
        model.regularizer_ = (RKHSNorm(model.feature_map_) if header["regularizer"] == "rkhs"
                              else get_regularizer(header["regularizer"]))
        if "dual" in header:
            model.coef_ = None
            model.kernel_, model.dual_coef_, model.X_fit_ = body
        else:
            model.coef_ = np.frombuffer(body, dtype="<f8").reshape(s, m).astype(np.float64)
        model.n_features_in_ = model.feature_map_.n_features_in_
        model.n_iter_ = header["n_iter"]
        model.converged_ = header["converged"]
        model.alpha_ = float(header.get("alpha", model.alpha))    # files before C: alpha
        model.sigma_ = header.get("sigma")
        model._y_1d = header["targets_1d"]
        if "feature_names" in header:
            model.feature_names_in_ = np.array(header["feature_names"], dtype=object)
        if "classes" in header:
            model.classes_ = np.array(header["classes"]["values"],
                                      dtype=np.dtype(header["classes"]["dtype"]))
        if model.is_classifier != ("classes" in header):    # the loss parameter resolves
            raise ValueError("its loss parameter and its classes disagree")
    except (KeyError, TypeError, ValueError, AttributeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path} is a corrupted skylite model file: {exc}") from None
    if model.coef_ is not None and model.feature_map_.n_features != s:
        raise ValueError(f"{path} is a corrupted skylite model file: the feature map has "
                         f"{model.feature_map_.n_features} features but W has {s} rows")
    return model


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
    sizes = [int(np.prod(shape)) for _, shape in specs]
    total = 8 * sum(sizes)
    if total > len(body):
        raise ValueError(f"the feature map's arrays need {total} bytes, the file has "
                         f"{len(body)} after its header")
    start = len(body) - total
    arrays = {}
    for (name, shape), size in zip(specs, sizes):
        arrays[name] = np.frombuffer(body, dtype="<f8", count=size,
                                     offset=start).reshape(shape).astype(np.float64)
        start += 8 * size
    return body[:len(body) - total], arrays


def _load_dual(spec, body):
    """(kernel, dual_coef_, X_fit_) of an exact kernel model from its header and body."""
    (n, m), d, nnz = spec["shape"], spec["n_features"], spec["nnz"]
    sizes = [n * m] + ([n + 1, nnz, nnz] if nnz is not None else [n * d])
    if len(body) != 8 * sum(sizes):
        raise ValueError(f"arrays have {len(body)} bytes, expected {8 * sum(sizes)}")
    parts, start = [], 0
    for size, dtype in zip(sizes, ["<f8"] + (["<i8", "<i8", "<f8"] if nnz is not None
                                            else ["<f8"])):
        parts.append(np.frombuffer(body, dtype=dtype, count=size, offset=8 * start).copy())
        start += size
    dual = parts[0].reshape(n, m)
    if nnz is None:
        X = parts[1].reshape(n, d)
    else:
        X = sp.csr_matrix((parts[3], parts[2].astype(np.int32), parts[1]), shape=(n, d))
    return _rebuild_object("kernel", spec["kernel"]), dual, X


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
