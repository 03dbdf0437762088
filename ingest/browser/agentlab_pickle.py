"""Loading BrowserGym / AgentLab pickles without running their code: every global the pickle names must be
on an allowlist, and each allowed class is replaced by a plain-data stand-in (dict, list, str).

`restricted_loads(data, allowed)` refuses anything else with `SourceError("forbidden_pickle_class", ...)`:
a pickle whose reduce would call `os.system` names `posix.system`, which no allowlist holds, so nothing runs.
The stand-ins never call into the named library: an object built with `NEWOBJ` + `BUILD` becomes a dict of
its state, a numpy array a (nested) list, a path a string, a datetime its ISO text.
"""

from __future__ import annotations

import datetime as dt
import io
import pickle
from typing import Callable

from ingest.source import SourceError


class PlainRecord(dict):
    """Stand-in for a dataclass or plain object: its pickled state as a dict."""

    def __init__(self, *args, **kwargs):  # REDUCE may call the class with arguments; keep them as data
        super().__init__()
        if args:
            self["args"] = list(args)
        self.update(kwargs)

    def __setstate__(self, state):
        if isinstance(state, tuple) and len(state) == 2:  # (__dict__, __slots__ state)
            for part in state:
                if isinstance(part, dict):
                    self.update(part)
        elif isinstance(state, dict):
            self.update(state)
        else:
            self["state"] = state


class PlainArray(list):
    """Stand-in for `numpy.ndarray`, rebuilt by `numpy.core.multiarray._reconstruct` then `BUILD`."""

    def __setstate__(self, state):
        import numpy as np  # numpy only decodes the raw buffer here; it never sees the pickle

        _version, shape, dtype, _fortran, raw = state
        if isinstance(raw, (bytes, bytearray)):
            values = np.frombuffer(raw, dtype=_numpy_dtype(dtype)).reshape(shape).tolist()
        else:  # object arrays pickle their items as a list
            values = list(raw)
        self.extend(values if isinstance(values, list) else [values])


def _reconstruct(_cls, _shape, _typecode) -> PlainArray:
    return PlainArray()


def _scalar(dtype, raw=None):
    """Stand-in for `numpy.core.multiarray.scalar(dtype, bytes)`: the Python value."""
    import numpy as np

    if not isinstance(raw, (bytes, bytearray)):
        return raw
    return np.frombuffer(raw, dtype=_numpy_dtype(dtype))[0].item()


def _numpy_dtype(dtype):
    import numpy as np

    return np.dtype(dtype.get("descr") or "u1").newbyteorder(dtype.get("byteorder") or "=")


class PlainDType(dict):
    """Stand-in for `numpy.dtype('<i8', False, True)` followed by `BUILD` with its byte order."""

    def __init__(self, descr=None, _align=False, _copy=False):
        super().__init__(descr=descr)

    def __setstate__(self, state):
        if isinstance(state, tuple) and len(state) > 1 and state[1] in ("<", ">", "=", "|"):
            self["byteorder"] = state[1]


def _path(*parts) -> str:
    return "/".join(str(p) for p in parts)


def _datetime(*args) -> str:
    return dt.datetime(*args).isoformat()  # a pure value type: its pickled bytes only hold the fields


def _date(*args) -> str:
    return dt.date(*args).isoformat()


_LOOP_CLASSES = ("StepInfo", "StepTimestamps", "ExpArgs", "EnvArgs", "ExpResult")
_LOOP_MODULES = ("browsergym.experiments.loop", "agentlab.experiments.loop", "browsergym.experiments.agent")

ALLOWED: dict[tuple[str, str], Callable] = {
    **{(module, name): PlainRecord for module in _LOOP_MODULES for name in _LOOP_CLASSES},
    # agent argument classes pickled in exp_args.pkl: BrowserGym's demo agent and AgentLab's generic agent
    ("agent", "DemoAgentArgs"): PlainRecord,
    ("demo_agent.agent", "DemoAgentArgs"): PlainRecord,
    ("agentlab.agents.generic_agent.generic_agent", "GenericAgentArgs"): PlainRecord,
    ("agentlab.agents.generic_agent.generic_agent_prompt", "GenericPromptFlags"): PlainRecord,
    ("agentlab.agents.dynamic_prompting", "ObsFlags"): PlainRecord,
    ("agentlab.agents.dynamic_prompting", "ActionFlags"): PlainRecord,
    ("agentlab.llm.chat_api", "OpenAIModelArgs"): PlainRecord,
    ("numpy.core.multiarray", "_reconstruct"): _reconstruct,
    ("numpy._core.multiarray", "_reconstruct"): _reconstruct,
    ("numpy.core.multiarray", "scalar"): _scalar,
    ("numpy._core.multiarray", "scalar"): _scalar,
    ("numpy", "ndarray"): PlainArray,
    ("numpy", "dtype"): PlainDType,
    ("pathlib", "PosixPath"): _path,
    ("pathlib", "WindowsPath"): _path,
    ("pathlib", "Path"): _path,
    ("datetime", "datetime"): _datetime,
    ("datetime", "date"): _date,
}


class _RestrictedUnpickler(pickle.Unpickler):
    def __init__(self, data: bytes, allowed: dict[tuple[str, str], Callable]):
        super().__init__(io.BytesIO(data))
        self.allowed = allowed

    def find_class(self, module: str, name: str):
        # every global (GLOBAL, STACK_GLOBAL, INST, extension codes) passes through here
        try:
            return self.allowed[(module, name)]
        except KeyError:
            raise SourceError("forbidden_pickle_class",
                              f"pickle names {module}.{name}, which is not on the allowlist") from None


def restricted_loads(data: bytes, allowed: dict[tuple[str, str], Callable] | None = None):
    """Unpickle `data` with only the `allowed` globals (default: `ALLOWED`), each mapped to its stand-in.

    Raises SourceError: `forbidden_pickle_class` for a global not on the allowlist, `bad_pickle` for
    corrupt data.
    """
    try:
        return _RestrictedUnpickler(data, ALLOWED if allowed is None else allowed).load()
    except SourceError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError, KeyError, AttributeError,
            MemoryError) as e:
        raise SourceError("bad_pickle", f"unreadable pickle: {type(e).__name__}: {e}") from None
