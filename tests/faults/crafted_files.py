"""Model files written on purpose: a saved file's header and body read back, edited and
written again with a valid checksum, as someone crafting a file would.  Used by
tests/test_model_files.py and benchmarks/fault_report.py.
"""
import copy
import hashlib
import json
import struct

from skylite.persistence import MAGIC, VERSION


def read_model_file(path):
    """(header dict, body bytes) of a model file of the current format."""
    data = open(path, "rb").read()[:-32]
    length = struct.unpack("<II", data[8:16])[1]
    return json.loads(data[16:16 + length]), data[16 + length:]


def write_model_file(path, header, body=b"", length=None):
    """Write `header` (a JSON-able value, or raw bytes) and `body` as a model file whose
    checksum matches; `length`: the header length it states (default: the true one)."""
    blob = header if isinstance(header, bytes) else json.dumps(header).encode("utf-8")
    length = len(blob) if length is None else length
    data = MAGIC + struct.pack("<II", VERSION, length) + blob + body
    with open(path, "wb") as f:
        f.write(data + hashlib.sha256(data).digest())


def node_paths(value, prefix=()):
    """The paths (tuples of keys and indices) of every node of a JSON value, itself first."""
    paths = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            paths += node_paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            paths += node_paths(item, prefix + (index,))
    return paths


def replaced(header, path, value):
    """A copy of `header` with the node at `path` (not the root) replaced by `value`."""
    header = copy.deepcopy(header)
    node = header
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return header


def nested(depth, opening="["):
    """JSON bytes nested `depth` levels deep in arrays ("[") or objects ("{")."""
    if opening == "{":
        return ('{"a": ' * depth + "0" + "}" * depth).encode()
    return ("[" * depth + "0" + "]" * depth).encode()
