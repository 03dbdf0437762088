"""Loading untrusted pickles (AndroidWorld results, BrowserGym / AgentLab steps, other agent logs): data is
decoded, code never runs.

A pickle names every callable it needs as a global (`module.name`) and asks the unpickler to call it (REDUCE,
NEWOBJ, INST/OBJ, BUILD through `__setstate__`). Here a global is one of three things, decided before anything
is called:

- a constructor of plain data (`SAFE_GLOBALS`: set / frozenset / bytearray / complex / OrderedDict,
  `_codecs.encode` for protocol-2 bytes, datetime types, pathlib paths (as strings), numpy arrays, dtypes and scalars rebuilt through
  checked constructors: plain ndarrays only, no object dtype; plus what a reader passes as `allowed`): called;
- any other global of the standard library (`os.system`, `builtins.eval`, `subprocess.Popen`,
  `functools.partial`, `builtins.getattr`...): the code a `__reduce__` payload runs, never data an agent log
  holds; loading stops with `SourceError("forbidden_pickle_class", ...)` naming it, before anything is called;
- any other class (an agent's dataclass, a pydantic model, an Enum, a class from a newer release of the
  producer): a `Record` stand-in, a dict of the instance's pickled state, whatever the opcodes ask. Its class
  is one this module makes (`.pickled_class` names the original, `.known` says whether the reader listed it),
  so none of the named library's code runs (or needs to be installed). What it keeps:
  NEWOBJ / REDUCE arguments as the item `args` (an Enum member: `{"args": [value]}`; a namedtuple: its
  fields), the state BUILD gives it as items (a `__dict__`; `(__dict__, slots)`; pydantic's `__dict__` entry
  merged in, its other entries kept by name; any other state as the item `state`), items APPENDed to it (a
  list subclass) as `items`. A class named as a value, never instantiated, becomes a `Record` with the single
  item `global` ("module.name"). The same named callable used as a function (a third-party `load(...)`) is
  kept the same way: inert, its arguments as `args`.

Readers list the classes their format is known to store with `records(...)`; the names of the others are
given back through `unknown` (a list the caller passes), for the reader to report as warnings
(`ingest.record.warn`): data is never refused for its class name.

Budgets (`ingest.source.Budgets`; a hit raises `BudgetExceeded`, rule `budget_exceeded`, naming the budget
and how to raise it; nothing is returned):
- `pickle_bytes`: the pickle's own size plus every byte it asks a constructor to allocate (`bytearray(n)`,
  numpy array shapes), checked before the allocation; a gzipped pickle is inflated as a stream up to it;
- `pickle_array_bytes`: one array or bytearray;
- `pickle_items`: the references the loaded value holds, a shared one counted at every use. Memo references
  let a few hundred bytes describe a DAG whose expansion (what `repr`, `json.dumps` or any walk of it
  visits) is exponential; the count is taken level by level with `gc.get_referents` (C speed, ~15% of the
  load) and stops as soon as it passes the budget;
- `pickle_depth`: nesting depth of the loaded value (a walk of a deeper one would hit Python's recursion
  limit in the reader);
- `pickle_classes`: distinct classes a pickle names that its reader does not list (each costs a stand-in
  class of about a kilobyte).
Bytes after the pickle's end (a second pickle, a second gzip member) raise `trailing_data`, or are reported
through `notes` when the caller passes a list and can keep the value.

API:
    restricted_loads(data, allowed=None, where="pickle", budgets=None, notes=None, unknown=None) -> object
    load_gzip(data, where, allowed=None, max_bytes=None, budgets=None, notes=None, unknown=None) -> object
    records("pkg.module.Class", ...) -> allowlist entries;  Record: the stand-in (a dict; `.pickled_class`)
"""

from __future__ import annotations

import _compat_pickle
import codecs
import collections
import datetime as dt
import gc
import io
import math
import pickle
import sys
from typing import Callable

from ingest.safe_zip import gunzip
from ingest.source import BudgetExceeded, Budgets, SourceError, default_budgets

MAX_DECOMPRESSED_BYTES = Budgets.pickle_bytes  # the default of the `pickle_bytes` budget


class Record(dict):
    """Stand-in for a class the pickle names: the instance's pickled state as dict items (see the module
    docstring for what goes where). Never runs code of the class it stands for."""

    __slots__ = ()
    pickled_class = ""  # "module.name" of the class it stands for
    known = True  # False for a class no reader listed (reported through `unknown`)

    def __new__(cls, *args, **kwargs):  # NEWOBJ(_EX) and REDUCE pass the instance's arguments: kept as data
        self = super().__new__(cls)
        if args:
            self["args"] = list(args)
        if kwargs:
            self["kwargs"] = dict(kwargs)
        return self

    def __init__(self, *args, **kwargs):  # REDUCE calls the class: __new__ kept the arguments already
        pass

    def __setstate__(self, state):
        parts = state if isinstance(state, tuple) and len(state) == 2 else (state,)  # (__dict__, slots)
        for part in parts:
            if isinstance(part, dict):
                inner = part.get("__dict__")
                if isinstance(inner, dict):  # pydantic: {"__dict__": fields, "__pydantic_extra__": ...}
                    self.update(inner)
                    self.update((k, v) for k, v in part.items() if k != "__dict__")
                else:
                    self.update(part)
            elif part is not None:
                self["state"] = part

    def append(self, item):  # APPEND(S) onto an instance of a list subclass
        self.setdefault("items", []).append(item)

    def extend(self, items):
        self.setdefault("items", []).extend(items)


def _record_class(qualified: str, known: bool) -> type[Record]:
    name = qualified.rsplit(".", 1)[-1]
    return type(name, (Record,), {"__slots__": (), "pickled_class": qualified, "known": known})


def records(*qualified_names: str) -> dict[tuple[str, str], type[Record]]:
    """Allowlist entries that rebuild each `module.Class` as a `Record` subclass named after it: classes a
    format is known to store (no warning when a pickle holds them)."""
    out = {}
    for qualified in qualified_names:
        module, name = qualified.rsplit(".", 1)
        out[(module, name)] = _record_class(qualified, known=True)
    return out


def _is_standard_library(module: str) -> bool:
    top = module.split(".", 1)[0]
    return top in sys.stdlib_module_names or top == "builtins"


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


class _Allocations:
    """What one load has asked constructors to allocate, against `pickle_bytes` and `pickle_array_bytes`."""

    def __init__(self, budgets: Budgets, start: int):
        self.budgets, self.total = budgets, start

    def take(self, nbytes: int, what: str) -> None:
        if nbytes > self.budgets.pickle_array_bytes:
            raise BudgetExceeded("pickle_array_bytes", self.budgets.pickle_array_bytes, "pickle",
                                 f"{what} of {nbytes} bytes")
        self.total += nbytes
        if self.total > self.budgets.pickle_bytes:
            raise BudgetExceeded("pickle_bytes", self.budgets.pickle_bytes, "pickle",
                                 f"{what} of {nbytes} bytes brings what it allocates to {self.total} bytes")


def _np_reconstruct(subtype, shape, dtype_code, _alloc: _Allocations | None = None):
    import numpy as np

    if subtype is not _NdarrayType:
        raise _refuse(f"numpy _reconstruct of {getattr(subtype, '__name__', subtype)!r}")
    dtype = _np_dtype(dtype_code.decode("latin1") if isinstance(dtype_code, bytes) else dtype_code)
    dims = shape if isinstance(shape, tuple) else (shape,)
    if not all(isinstance(d, int) and d >= 0 for d in dims):
        raise SourceError("parse_error", f"numpy array shape {shape!r} is not a tuple of sizes")
    if _alloc is not None:
        _alloc.take(math.prod(dims) * dtype.itemsize, f"a numpy array of shape {shape}")
    # an empty plain ndarray; BUILD then fills it from (version, shape, dtype, fortran, raw bytes)
    return np.ndarray.__new__(np.ndarray, shape, dtype)


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


def _path(*parts) -> str:
    """A pathlib path (its pickle is `PosixPath('a', 'b')`) as the string it names; pathlib is never called."""
    if not all(isinstance(part, str) for part in parts):
        raise _refuse("a pathlib path of anything but strings")
    return "/".join(parts).replace("//", "/")


class _BuiltinBase:
    """What the pickle gets for `builtins.tuple` / `list` / `dict`: only the base named by
    `copyreg._reconstructor` (an instance of a subclass, protocols 0-1); calling it (`list(x)` copies x
    item by item, unmetered) is refused."""

    def __init__(self, name: str):
        self.name = name

    def __call__(self, *args, **kwargs):
        raise _refuse(f"builtins.{self.name} called")


_BASES = {name: _BuiltinBase(name) for name in ("tuple", "list", "dict")}


def _reconstructor(cls, base, state):  # protocol 0/1 object creation: only for Record stand-ins
    if not (isinstance(cls, type) and issubclass(cls, Record)) or not (base is object or base in _BASES.values()):
        raise _refuse(f"copyreg._reconstructor of {getattr(cls, '__name__', cls)!r}")
    record = Record.__new__(cls)
    if base is _BASES["dict"] and isinstance(state, dict):
        record.update(state)
    elif base is not object and isinstance(state, (list, tuple)):  # a namedtuple's fields are its arguments,
        record["args" if base is _BASES["tuple"] else "items"] = list(state)  # as NEWOBJ gives them (protocol 2+)
    return record


SAFE_GLOBALS: dict[tuple[str, str], Callable] = {
    ("builtins", "set"): set, ("builtins", "frozenset"): frozenset, ("builtins", "bytearray"): bytearray,
    ("builtins", "complex"): complex, ("builtins", "object"): object,
    **{("builtins", name): base for name, base in _BASES.items()},
    **{("pathlib", name): _path for name in ("Path", "PosixPath", "WindowsPath", "PurePath", "PurePosixPath",
                                             "PureWindowsPath")},
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("_codecs", "encode"): _codecs_encode, ("copyreg", "_reconstructor"): _reconstructor,
    ("datetime", "datetime"): dt.datetime, ("datetime", "date"): dt.date, ("datetime", "time"): dt.time,
    ("datetime", "timedelta"): dt.timedelta, ("datetime", "timezone"): dt.timezone,
    ("numpy", "ndarray"): _NdarrayType, ("numpy", "dtype"): _np_dtype,
    ("numpy.core.multiarray", "_reconstruct"): _np_reconstruct, ("numpy._core.multiarray", "_reconstruct"): _np_reconstruct,
    ("numpy.core.numeric", "_frombuffer"): _np_frombuffer, ("numpy._core.numeric", "_frombuffer"): _np_frombuffer,
    ("numpy.core.multiarray", "scalar"): _np_scalar, ("numpy._core.multiarray", "scalar"): _np_scalar,
}


_RECONSTRUCT = {("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct")}


class _Unpickler(pickle.Unpickler):
    def __init__(self, data: bytes, allowed: dict, alloc: _Allocations):
        self.stream = io.BytesIO(data)  # BytesIO has no peek: the unpickler reads no further than the STOP
        super().__init__(self.stream)
        self._allowed, self._alloc = allowed, alloc
        self.unknown: dict[str, type[Record]] = {}  # stand-ins made for classes nobody listed, first seen first

    def find_class(self, module: str, name: str):
        # protocol 0-2 pickles use Python 2 names (__builtin__.set, copy_reg...): map them as pickle does
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        found = self._allowed.get((module, name))
        if found is None:
            return self._stand_in(module, name)
        # the constructors that allocate what their arguments ask for are metered against the budgets
        if found is bytearray:
            return self._bytearray
        if (module, name) in _RECONSTRUCT and found is _np_reconstruct:
            return lambda subtype, shape, dtype_code: _np_reconstruct(subtype, shape, dtype_code, self._alloc)
        return found

    def _stand_in(self, module: str, name: str) -> type[Record]:
        """The inert class for a global no one listed; a standard-library one is code (`os.system`): refused."""
        if _is_standard_library(module):
            raise _refuse(f"{module}.{name}")
        qualified = f"{module}.{name}"
        if qualified not in self.unknown:
            limit = self._alloc.budgets.pickle_classes
            if len(self.unknown) >= limit:
                raise BudgetExceeded("pickle_classes", limit, "pickle", f"a class more than that ({qualified})")
            self.unknown[qualified] = _record_class(qualified, known=False)
        return self.unknown[qualified]

    def _bytearray(self, source=b"", *args):
        if isinstance(source, int) and not isinstance(source, bool):
            self._alloc.take(source, "a bytearray")
        return bytearray(source, *args)

    def persistent_load(self, pid):
        raise _refuse(f"persistent id {pid!r}")


def restricted_loads(data: bytes, allowed: dict[tuple[str, str], Callable] | None = None,
                     where: str = "pickle", budgets: Budgets | None = None, notes: list[str] | None = None,
                     unknown: list[str] | None = None) -> object:
    """Unpickle `data` with `SAFE_GLOBALS` plus `allowed` ((module, name) -> callable or `Record` class),
    within `budgets` (default: the process's). Classes neither lists become `Record`s; when `unknown` is a
    list, their names ("module.name", first seen first) are appended to it.

    Raises SourceError: `forbidden_pickle_class` naming the first standard-library global not allowed,
    `budget_exceeded` naming the budget, `parse_error` for a pickle that is corrupt or truncated,
    `trailing_data` for bytes after the pickle's end (a second pickle, a second gzip member...) unless `notes`
    is a list: then a line saying so is appended to it and the value returned. All name `where`.
    """
    budgets = budgets or default_budgets()
    try:
        if len(data) > budgets.pickle_bytes:
            raise BudgetExceeded("pickle_bytes", budgets.pickle_bytes, "pickle", f"{len(data)} bytes of pickle")
        unpickler = _Unpickler(data, {**SAFE_GLOBALS, **(allowed or {})}, _Allocations(budgets, len(data)))
        value = unpickler.load()
        if _check_expansion(value, budgets):
            value = _bare_classes_as_records(value)
        end = unpickler.stream.tell()
        if end < len(data):
            message = f"{len(data) - end} bytes after the end of the pickle (offset {end}), not read"
            if notes is None:
                raise SourceError("trailing_data", message)
            notes.append(f"{where}: {message}")
        if unknown is not None:
            unknown.extend(unpickler.unknown)
        return value
    except BudgetExceeded as e:
        raise BudgetExceeded(e.budget, e.limit, where, e.what) from None
    except SourceError as e:
        raise SourceError(e.rule, f"{where}: {e.reason}", where) from None
    except MemoryError:  # a length field the allocation of which failed before the data was even read
        raise BudgetExceeded("pickle_bytes", budgets.pickle_bytes, where,
                             "the pickle declares an object larger than memory allows") from None
    except Exception as e:  # corrupt data makes the unpickler raise almost anything
        raise SourceError("parse_error", f"{where}: not a readable pickle ({type(e).__name__}: {e})", where) from None


_CONTAINERS = (dict, list, tuple, set, frozenset)
_PLAIN_CONTAINERS = frozenset(_CONTAINERS)


def _is_record_class(obj) -> bool:
    return isinstance(obj, type) and issubclass(obj, Record)


def _check_expansion(value: object, budgets: Budgets) -> bool:
    """Count the references `value` holds, level by level, a shared object at every use (its expansion), and
    the levels: BudgetExceeded `pickle_items` / `pickle_depth` as soon as one is passed. Only containers the
    collector tracks are descended into (strings and numbers hold no references; a dict of those is
    untracked), and only data containers: a class or function a pickle names leads to whole modules.
    True when a `Record` class itself is among the values (a class named, never instantiated)."""
    referents, tracked = gc.get_referents, gc.is_tracked
    # a Record's class is among its instance's referents: each instance met cancels one meeting of a class
    bare = [0]

    def container(obj) -> bool:  # called on tracked objects only
        if type(obj) in _PLAIN_CONTAINERS:
            return True
        if isinstance(obj, _CONTAINERS):
            if isinstance(obj, Record):
                bare[0] -= 1
            return True
        if isinstance(obj, type) and issubclass(obj, Record):
            bare[0] += 1
        return False

    frontier = [value] if tracked(value) and container(value) else []
    items, depth = 1, 0
    while frontier:
        depth += 1
        if depth > budgets.pickle_depth:
            raise BudgetExceeded("pickle_depth", budgets.pickle_depth, "pickle", "the value is nested deeper")
        following: list = []
        for start in range(0, len(frontier), 4096):  # the references of a few thousand containers at a time
            kids = referents(*frontier[start:start + 4096])
            items += len(kids)
            if items > budgets.pickle_items:
                raise BudgetExceeded("pickle_items", budgets.pickle_items, "pickle",
                                     "its shared references expand to more items (memo fan-out)")
            following.extend(filter(container, filter(tracked, kids)))
        frontier = following
    return bare[0] > 0 or _is_record_class(value)


def _bare_classes_as_records(value):
    """`value` with every Record class that stands as a value (not as an instance's type) replaced by a
    Record `{"global": "module.name"}`. Runs only when `_check_expansion` saw one; the walk is bounded by it."""
    def ref(cls):
        out = Record.__new__(_record_class(cls.pickled_class, cls.known))
        out["global"] = cls.pickled_class
        return out

    done: dict[int, object] = {}  # shared containers are fixed once

    def fix(obj):
        if _is_record_class(obj):
            return ref(obj)
        if id(obj) in done:
            return done[id(obj)]
        done[id(obj)] = obj
        if isinstance(obj, dict):
            for k, v in obj.items():
                if isinstance(v, (dict, list, tuple, type)):
                    obj[k] = fix(v)
        elif isinstance(obj, list):
            for i, v in enumerate(obj):
                if isinstance(v, (dict, list, tuple, type)):
                    obj[i] = fix(v)
        elif isinstance(obj, tuple):
            fixed = tuple(fix(v) for v in obj)
            if any(a is not b for a, b in zip(fixed, obj)):
                done[id(obj)] = fixed
                return fixed
        return obj

    return fix(value)


def load_gzip(data: bytes, where: str, allowed: dict[tuple[str, str], Callable] | None = None,
              max_bytes: int | None = None, budgets: Budgets | None = None,
              notes: list[str] | None = None, unknown: list[str] | None = None) -> object:
    """A gzipped pickle (`*.pkl.gz`): inflated as a stream up to `max_bytes` (default: the `pickle_bytes`
    budget; SourceError `archive_too_large` past it, `bad_archive` if not gzip: see `gunzip`, which also
    explains `notes`), then `restricted_loads` (which explains `unknown`)."""
    budgets = budgets or default_budgets()
    # screenshots compress far better than the zip bomb ratio: only the absolute cap applies here
    data = gunzip(data, where, max_bytes=budgets.pickle_bytes if max_bytes is None else max_bytes,
                  max_ratio=float("inf"), budgets=budgets, notes=notes, cap_name="pickle_bytes")
    return restricted_loads(data, allowed, where, budgets, notes, unknown)
