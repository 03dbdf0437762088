"""Loading untrusted pickles (AndroidWorld results, other agent logs) without running their code.

A pickle names every callable it needs as a global (`module.name`); unpickling calls them. Here each global
must be on an allowlist, or loading stops with `SourceError("forbidden_pickle_class", ...)` naming it, before
anything is called: a pickle whose reduce would run `os.system` names `posix.system` and is refused.

Always allowed (`SAFE_GLOBALS`): containers and scalars pickle has opcodes for, plus set / frozenset /
bytearray / complex / OrderedDict, `_codecs.encode` (protocol-2 bytes), datetime types, and numpy arrays,
dtypes and scalars rebuilt through checked constructors (plain ndarrays only, no object dtype).
Callers add the classes their format stores with `records(...)`: each becomes a `Record`, a dict of the
instance's pickled state, so none of the named library's code runs (or needs to be installed).

API:
    restricted_loads(data, allowed=None, where="pickle") -> object
    load_gzip(data, where, allowed=None, max_bytes=MAX_DECOMPRESSED_BYTES) -> object
    records("pkg.module.Class", ...) -> allowlist entries;  Record: the stand-in (a dict; `.pickled_class`)
"""

from __future__ import annotations

import _compat_pickle
import codecs
import collections
import datetime as dt
import io
import pickle
from typing import Callable

from ingest.safe_zip import gunzip
from ingest.source import SourceError

MAX_DECOMPRESSED_BYTES = 1 << 30  # a result file of full-resolution screenshots is a few hundred MB


class Record(dict):
    """Stand-in for an allowed class: the instance's pickled state (its attributes) as dict items."""

    pickled_class = ""

    def __init__(self, *args, **kwargs):  # REDUCE calls the class with arguments: keep them as data
        super().__init__(kwargs)
        if args:
            self["args"] = list(args)

    def __setstate__(self, state):
        parts = state if isinstance(state, tuple) and len(state) == 2 else (state,)  # (__dict__, slots)
        for part in parts:
            if isinstance(part, dict):
                self.update(part)
            elif part is not None:
                self["state"] = part


def records(*qualified_names: str) -> dict[tuple[str, str], type[Record]]:
    """Allowlist entries that rebuild each `module.Class` as a `Record` subclass named after it."""
    out = {}
    for qualified in qualified_names:
        module, name = qualified.rsplit(".", 1)
        out[(module, name)] = type(name, (Record,), {"pickled_class": qualified})
    return out


def _refuse(what: str) -> SourceError:
    return SourceError("forbidden_pickle_class", f"pickle needs {what}, which is not allowed; nothing was loaded")


class _NdarrayType:
    """What the pickle gets for `numpy.ndarray`: only `_np_reconstruct` accepts it."""


def _np_dtype(spec, align=False, copy=True):
    import numpy as np

    if not isinstance(spec, str):
        raise _refuse(f"numpy.dtype({type(spec).__name__})")
    dtype = np.dtype(spec)
    if dtype.hasobject:
        raise _refuse("a numpy array of Python objects (dtype 'O')")
    return dtype


def _np_reconstruct(subtype, shape, dtype_code):
    import numpy as np

    if subtype is not _NdarrayType:
        raise _refuse(f"numpy _reconstruct of {getattr(subtype, '__name__', subtype)!r}")
    # an empty plain ndarray; BUILD then fills it from (version, shape, dtype, fortran, raw bytes)
    return np.ndarray.__new__(np.ndarray, shape, _np_dtype(dtype_code.decode("latin1")
                                                           if isinstance(dtype_code, bytes) else dtype_code))


def _np_scalar(dtype, data=None):
    import numpy as np

    if not isinstance(dtype, np.dtype) or dtype.hasobject or not isinstance(data, bytes):
        raise _refuse("a numpy scalar holding a Python object")
    return np.frombuffer(data, dtype=dtype)[0]


def _np_frombuffer(buffer, dtype, shape, order="C"):  # protocol 5 arrays
    import numpy as np

    if not isinstance(dtype, np.dtype) or dtype.hasobject or not isinstance(buffer, (bytes, bytearray, pickle.PickleBuffer)):
        raise _refuse("numpy _frombuffer of anything but raw bytes")
    return np.frombuffer(buffer, dtype=dtype).reshape(shape, order=order)


def _codecs_encode(text, encoding="latin1"):
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise _refuse("_codecs.encode with anything but (str, 'latin1')")
    return codecs.encode(text, encoding)


def _reconstructor(cls, base, state):  # protocol 0/1 object creation: only for Record stand-ins
    if not (isinstance(cls, type) and issubclass(cls, Record)) or base is not object:
        raise _refuse(f"copyreg._reconstructor of {getattr(cls, '__name__', cls)!r}")
    return cls.__new__(cls)


SAFE_GLOBALS: dict[tuple[str, str], Callable] = {
    ("builtins", "set"): set, ("builtins", "frozenset"): frozenset, ("builtins", "bytearray"): bytearray,
    ("builtins", "complex"): complex, ("builtins", "object"): object,
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("_codecs", "encode"): _codecs_encode, ("copyreg", "_reconstructor"): _reconstructor,
    ("datetime", "datetime"): dt.datetime, ("datetime", "date"): dt.date, ("datetime", "time"): dt.time,
    ("datetime", "timedelta"): dt.timedelta, ("datetime", "timezone"): dt.timezone,
    ("numpy", "ndarray"): _NdarrayType, ("numpy", "dtype"): _np_dtype,
    ("numpy.core.multiarray", "_reconstruct"): _np_reconstruct, ("numpy._core.multiarray", "_reconstruct"): _np_reconstruct,
    ("numpy.core.numeric", "_frombuffer"): _np_frombuffer, ("numpy._core.numeric", "_frombuffer"): _np_frombuffer,
    ("numpy.core.multiarray", "scalar"): _np_scalar, ("numpy._core.multiarray", "scalar"): _np_scalar,
}


class _Unpickler(pickle.Unpickler):
    def __init__(self, data: bytes, allowed: dict):
        super().__init__(io.BytesIO(data))
        self._allowed = allowed

    def find_class(self, module: str, name: str):
        # protocol 0-2 pickles use Python 2 names (__builtin__.set, copy_reg...): map them as pickle does
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        try:
            return self._allowed[(module, name)]
        except KeyError:
            raise _refuse(f"{module}.{name}") from None

    def persistent_load(self, pid):
        raise _refuse(f"persistent id {pid!r}")


def restricted_loads(data: bytes, allowed: dict[tuple[str, str], Callable] | None = None,
                     where: str = "pickle") -> object:
    """Unpickle `data` with `SAFE_GLOBALS` plus `allowed` ((module, name) -> callable or `Record` class).

    Raises SourceError: `forbidden_pickle_class` naming the first global not allowed, `parse_error` for a
    pickle that is corrupt or truncated. Both name `where`.
    """
    try:
        return _Unpickler(data, {**SAFE_GLOBALS, **(allowed or {})}).load()
    except SourceError as e:
        raise SourceError(e.rule, f"{where}: {e.reason}", where) from None
    except Exception as e:  # corrupt data makes the unpickler raise almost anything
        raise SourceError("parse_error", f"{where}: not a readable pickle ({type(e).__name__}: {e})", where) from None


def load_gzip(data: bytes, where: str, allowed: dict[tuple[str, str], Callable] | None = None,
              max_bytes: int = MAX_DECOMPRESSED_BYTES) -> object:
    """A gzipped pickle (`*.pkl.gz`): decompressed up to `max_bytes` (SourceError `archive_too_large` past
    it, `bad_archive` if not gzip), then `restricted_loads`."""
    # screenshots compress far better than the zip bomb ratio: only the absolute cap applies here
    return restricted_loads(gunzip(data, where, max_bytes=max_bytes, max_ratio=float("inf")), allowed, where)
