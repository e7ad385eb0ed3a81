"""Loading libmisgrid and calling it: ctypes prototypes, contexts, errors.

The library is found, in order, at $MISGRID_LIBRARY, through pkg-config
(the libdir of misgrid.pc, so PKG_CONFIG_PATH selects an install), by the
loader's search (ctypes.util.find_library), and in the build tree of the
repository this module came from (cabi/build).
"""

import ctypes
import ctypes.util
import os
import subprocess
import threading

import numpy as np

OK = 0
STATUS = {
    1: "MISGRID_ERR_NULL",
    2: "MISGRID_ERR_ARG",
    3: "MISGRID_ERR_RANGE",
    4: "MISGRID_ERR_HANDLE",
    5: "MISGRID_ERR_NOMEM",
    6: "MISGRID_ERR_NOGPU",
    7: "MISGRID_ERR_IO",
    8: "MISGRID_ERR_OPTION",
    9: "MISGRID_ERR_INTERNAL",
    10: "MISGRID_ERR_INCONSISTENT",
}
INT32, INT64 = 1, 2
FLOAT64 = 1


class MisgridError(Exception):
    """A libmisgrid call failed: .status is the status name
    ("MISGRID_ERR_ARG"), .code its number, str() misgrid's message."""

    def __init__(self, code, message):
        self.code = code
        self.status = STATUS.get(code, "status %d" % code)
        self.message = message
        super().__init__("%s [%s]" % (message, self.status))


class InputError(MisgridError, ValueError):
    """Bad input: a NULL, an invalid argument, a size or index out of
    range, or a bad option (MISGRID_ERR_NULL, _ARG, _RANGE, _OPTION)."""


class NoGPUError(MisgridError):
    """device=gpu and no GPU can be used (MISGRID_ERR_NOGPU)."""


class InconsistentError(MisgridError, ValueError):
    """A is singular and b has a part in its kernel above the tolerance:
    no x solves A x = b (MISGRID_ERR_INCONSISTENT)."""


def _error(code, message):
    if code in (1, 2, 3, 8):
        return InputError(code, message)
    if code == 5:
        return type("MisgridMemoryError", (MisgridError, MemoryError), {})(code, message)
    if code == 6:
        return NoGPUError(code, message)
    if code == 10:
        return InconsistentError(code, message)
    return MisgridError(code, message)


def _candidates():
    env = os.environ.get("MISGRID_LIBRARY")
    if env:
        yield env
    try:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "misgrid"], capture_output=True,
                                text=True, check=True, timeout=10).stdout.strip()
        if libdir:
            yield os.path.join(libdir, "libmisgrid.so.0")
    except (OSError, subprocess.SubprocessError):
        pass
    found = ctypes.util.find_library("misgrid")
    if found:
        yield found
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "..", "..", "cabi", "build", "libmisgrid.so.0")


def _load():
    tried = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError("libmisgrid not found; set MISGRID_LIBRARY or PKG_CONFIG_PATH. Tried: " +
                      "; ".join(tried))


lib, path = _load()

# The Go runtime in libmisgrid preempts its threads with SIGURG, through
# the handler it installed when the library loaded. A PETSc initialised
# after that (petsc4py, DOLFINx) puts its own error handler on SIGURG,
# and the next preemption would end the process; so Go's handler is
# saved now and put back before each call when something replaced it.
_libc = ctypes.CDLL(None, use_errno=True)
_SIGURG = 23  # Linux
_go_sigurg = ctypes.create_string_buffer(256)  # a struct sigaction, opaque
_have_go_sigurg = _libc.sigaction(_SIGURG, None, _go_sigurg) == 0


def _handler(sa):
    return ctypes.c_void_p.from_buffer(sa).value  # sa_handler/sa_sigaction, the first field


def keep_go_sigurg():
    """Puts Go's SIGURG handler back if another library replaced it."""
    if not _have_go_sigurg:
        return
    now = ctypes.create_string_buffer(256)
    if _libc.sigaction(_SIGURG, None, now) == 0 and _handler(now) != _handler(_go_sigurg):
        _libc.sigaction(_SIGURG, _go_sigurg, None)


H = ctypes.c_void_p  # every handle kind: an id, never a pointer
P = ctypes.c_void_p  # arrays, passed as addresses
i32, i64, f64 = ctypes.c_int32, ctypes.c_int64, ctypes.c_double
pi32, pi64, pf64 = ctypes.POINTER(i32), ctypes.POINTER(i64), ctypes.POINTER(f64)
pH = ctypes.POINTER(H)
s = ctypes.c_char_p

_PROTOS = {
    "misgrid_version": ([], s),
    "misgrid_status_string": ([ctypes.c_int], s),
    "misgrid_option_help": ([ctypes.c_char_p, i64, pi64], ctypes.c_int),
    "misgrid_handle_count": ([pi64], ctypes.c_int),
    "misgrid_context_create": ([pH], ctypes.c_int),
    "misgrid_context_destroy": ([H], ctypes.c_int),
    "misgrid_context_set_option": ([H, s], ctypes.c_int),
    "misgrid_error_message_copy": ([H, ctypes.c_char_p, i64, pi64], ctypes.c_int),
    "misgrid_graph_from_csr": ([H, i64, i64, i64, i32, i32, P, P, i32, P, s, pH], ctypes.c_int),
    "misgrid_graph_from_elements": ([H, i64, i32, i32, i64, i32, i32, P, i32, P, s, pH], ctypes.c_int),
    "misgrid_graph_destroy": ([H, H], ctypes.c_int),
    "misgrid_graph_size": ([H, H, pi64, pi64], ctypes.c_int),
    "misgrid_graph_adjacency": ([H, H, i32, i32, P, i64, P, i64], ctypes.c_int),
    "misgrid_graph_get_classes": ([H, H, i64, P], ctypes.c_int),
    "misgrid_graph_set_classes": ([H, H, i64, P], ctypes.c_int),
    "misgrid_graph_set_priority": ([H, H, i64, P], ctypes.c_int),
    "misgrid_graph_set_coordinates": ([H, H, i32, i64, P], ctypes.c_int),
    "misgrid_graph_get_dirichlet": ([H, H, i64, P], ctypes.c_int),
    "misgrid_mis": ([H, H, s, pH], ctypes.c_int),
    "misgrid_color": ([H, H, s, pH], ctypes.c_int),
    "misgrid_hierarchy": ([H, H, s, pH], ctypes.c_int),
    "misgrid_aggregate": ([H, H, i64, P, pH], ctypes.c_int),
    "misgrid_verify": ([H, H, i64, P, i32, pi32, ctypes.c_char_p, i64], ctypes.c_int),
    "misgrid_write_vtu": ([H, H, H, s, s], ctypes.c_int),
    "misgrid_result_destroy": ([H, H], ctypes.c_int),
    "misgrid_result_num_levels": ([H, H, pi64], ctypes.c_int),
    "misgrid_result_level_info": ([H, H, i64, pi64, pi64, pi64, pi64, pi64], ctypes.c_int),
    "misgrid_result_set_flags": ([H, H, i64, i64, P], ctypes.c_int),
    "misgrid_result_aggregates": ([H, H, i64, i32, i32, i64, P], ctypes.c_int),
    "misgrid_result_aggregate_roots": ([H, H, i64, i32, i32, i64, P, pi64], ctypes.c_int),
    "misgrid_result_colors": ([H, H, i64, i32, i64, P], ctypes.c_int),
    "misgrid_result_level_graph": ([H, H, i64, pH], ctypes.c_int),
    "misgrid_solver_create": ([H, s, pH], ctypes.c_int),
    "misgrid_solver_destroy": ([H, H], ctypes.c_int),
    "misgrid_solver_set_coordinates": ([H, H, i32, i64, P], ctypes.c_int),
    "misgrid_solver_set_nullspace": ([H, H, i64, i32, P], ctypes.c_int),
    "misgrid_solver_set_kernel": ([H, H, i64, i32, P], ctypes.c_int),
    "misgrid_solver_setup": ([H, H, i64, i64, i64, i32, i32, P, P, i32, P], ctypes.c_int),
    "misgrid_solver_update_values": ([H, H, i64, i32, P], ctypes.c_int),
    "misgrid_solver_apply": ([H, H, i64, P, P], ctypes.c_int),
    "misgrid_solver_solve": ([H, H, i64, P, P, pi32, pi64, pf64], ctypes.c_int),
    "misgrid_solver_residuals": ([H, H, i64, P, pi64], ctypes.c_int),
    "misgrid_solver_info": ([H, H, pi64, pf64, pf64, pf64], ctypes.c_int),
    "misgrid_solver_level_info": ([H, H, i64, pi64, pi64, pi64], ctypes.c_int),
}

for _name, (_args, _res) in _PROTOS.items():
    _f = getattr(lib, _name)
    _f.argtypes, _f.restype = _args, _res

_local = threading.local()


def context():
    """This thread's context: its own error messages, never another's."""
    c = getattr(_local, "ctx", None)
    if c is None:
        h = H()
        st = lib.misgrid_context_create(ctypes.byref(h))
        if st != OK:
            raise _error(st, _message(None))
        c = _local.ctx = _Context(h)
    return c.handle


class _Context:
    def __init__(self, handle):
        self.handle = handle

    def __del__(self):
        if lib is not None and self.handle:
            lib.misgrid_context_destroy(self.handle)


def _message(ctx):
    need = i64()
    lib.misgrid_error_message_copy(ctx, None, 0, ctypes.byref(need))
    buf = ctypes.create_string_buffer(max(need.value, 1))
    lib.misgrid_error_message_copy(ctx, buf, len(buf), None)
    return buf.value.decode("utf-8", "replace")


def call(name, *args):
    """Calls misgrid_<name>(ctx, *args); raises MisgridError with misgrid's message."""
    keep_go_sigurg()
    ctx = context()
    st = getattr(lib, "misgrid_" + name)(ctx, *args)
    if st != OK:
        raise _error(st, _message(ctx))


def call_global(name, *args):
    """Calls a function that takes no context (misgrid_option_help, ...)."""
    keep_go_sigurg()
    st = getattr(lib, "misgrid_" + name)(*args)
    if st != OK:
        raise _error(st, _message(None))


def ptr(a):
    """The address of a numpy array's data (None for None)."""
    return None if a is None else a.ctypes.data_as(P)


def index_array(a, name):
    """a as a contiguous int32 or int64 array and its misgrid index type."""
    a = np.asarray(a)
    if a.dtype.kind not in "iu":
        raise TypeError("%s must hold integers, not %s" % (name, a.dtype))
    if a.dtype == np.int32 or (a.size and a.dtype.itemsize <= 4 and a.max() < 2**31):
        return np.ascontiguousarray(a, dtype=np.int32), INT32
    return np.ascontiguousarray(a, dtype=np.int64), INT64


def options(kw):
    """{"distance": 2, "priority": "boundary"} as "distance=2 priority=boundary"."""
    out = []
    for k, v in kw.items():
        if v is None:
            continue
        if isinstance(v, bool):
            v = "true" if v else "false"
        out.append("%s=%s" % (k, v))
    return " ".join(out).encode()
