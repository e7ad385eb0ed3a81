"""misgrid for Python scripts: ctypes over the installed libmisgrid.

Graphs from scipy.sparse matrices or element arrays, maximal independent
sets, aggregates, colorings, coarse-grid hierarchies and the smoothed-
aggregation AMG solver, all returned as numpy arrays. Failures raise
MisgridError (InputError for bad input) carrying libmisgrid's message.

    import misgrid
    g = misgrid.Graph.from_matrix(A)
    in_set = misgrid.mis(g, distance=2, priority="boundary")
    x, info = misgrid.solve(A, b, tol=1e-10)

See docs/python.md.
"""

import ctypes

from . import _lib
from ._lib import InconsistentError, InputError, MisgridError, NoGPUError
from .graph import CLASSES, ELEMENTS, Graph, Level, aggregate, aggregates, color, hierarchy, mis, verify, write_vtu
from .solver import SolveInfo, Solver, solve

__all__ = [
    "CLASSES", "ELEMENTS", "Graph", "InconsistentError", "InputError", "Level", "MisgridError", "NoGPUError", "SolveInfo",
    "Solver", "aggregate", "aggregates", "color", "handle_count", "hierarchy", "library_path", "mis",
    "option_help", "solve", "verify", "version", "write_vtu",
]

library_path = _lib.path


def version():
    """libmisgrid's version string, "MAJOR.MINOR.PATCH"."""
    return _lib.lib.misgrid_version().decode()


def option_help():
    """The description of every option key, from libmisgrid's registry."""
    need = ctypes.c_int64()
    _lib.call_global("option_help", None, 0, ctypes.byref(need))
    buf = ctypes.create_string_buffer(need.value)
    _lib.call_global("option_help", buf, need.value, None)
    return buf.value.decode()


def handle_count():
    """Live libmisgrid handles in the process (a leak check)."""
    n = ctypes.c_int64()
    _lib.call_global("handle_count", ctypes.byref(n))
    return n.value
