"""Graphs, maximal independent sets, aggregates, colorings, hierarchies."""

import ctypes

import numpy as np

from . import _lib
from ._lib import H, call, i32, i64, index_array, options, ptr

ELEMENTS = {
    "line2": (1, 2), "tri3": (2, 3), "quad4": (3, 4), "tet4": (4, 4), "hex8": (5, 8),
    "tri6": (6, 6), "quad9": (7, 9), "tet10": (8, 10), "hex27": (9, 27), "point1": (10, 1),
    "line3": (11, 3), "prism6": (12, 6), "pyramid5": (13, 5),
}
CLASSES = ("interior", "face", "edge", "corner")


def _csr(A):
    """A scipy.sparse matrix (or anything with tocsr) as CSR arrays."""
    if not hasattr(A, "tocsr"):
        raise TypeError("want a scipy.sparse matrix, not %s" % type(A).__name__)
    A = A.tocsr()
    if A.shape[0] != A.shape[1]:
        raise ValueError("the matrix is %d x %d, not square" % A.shape)
    indptr, it = index_array(A.indptr, "indptr")
    indices = np.ascontiguousarray(A.indices, dtype=indptr.dtype)
    values = np.ascontiguousarray(A.data, dtype=np.float64)
    return A.shape[0], indptr, indices, it, values


class Graph:
    """A mesh graph inside libmisgrid. Make one with from_matrix or
    from_elements; it is freed with the object."""

    def __init__(self, handle):
        self._h = handle

    def __del__(self):
        if getattr(self, "_h", None) and _lib.lib is not None:
            _lib.lib.misgrid_graph_destroy(_lib.context(), self._h)
            self._h = None

    @classmethod
    def from_matrix(cls, A, theta=None, block_size=None, pattern=False):
        """The graph of a square scipy.sparse matrix: symmetrised, diagonal
        dropped, repeats summed. theta (strength threshold) and block_size
        (dofs per vertex) need values; pattern=True ignores them."""
        n, indptr, indices, it, values = _csr(A)
        h = H()
        call("graph_from_csr", n, n, indptr[-1], it, 0, ptr(indptr), ptr(indices),
             0 if pattern else _lib.FLOAT64, None if pattern else ptr(values),
             options({"theta": theta, "block_size": block_size}), ctypes.byref(h))
        return cls(h)

    @classmethod
    def from_elements(cls, conn, element_type="tet4", coords=None, nnodes=None,
                      feature_angle=None, vertex_only=None):
        """The node graph of elements of one type: conn is (nelements,
        nodes per element) node ids from 0; coords (nnodes, dim) gives
        geometric boundary classes."""
        if element_type not in ELEMENTS:
            raise ValueError("element_type %r: want one of %s" % (element_type, ", ".join(ELEMENTS)))
        et, npe = ELEMENTS[element_type]
        conn, it = index_array(conn, "conn")
        if conn.ndim != 2 or conn.shape[1] != npe:
            raise ValueError("conn has shape %s; %s elements need (nelements, %d)" % (conn.shape, element_type, npe))
        dim, xyz = 0, None
        if coords is not None:
            xyz = np.ascontiguousarray(coords, dtype=np.float64)
            if xyz.ndim != 2:
                raise ValueError("coords must be (nnodes, dim), not shape %s" % (xyz.shape,))
            dim = xyz.shape[1]
            nnodes = xyz.shape[0] if nnodes is None else nnodes
        if nnodes is None:
            nnodes = int(conn.max()) + 1 if conn.size else 0
        h = H()
        call("graph_from_elements", nnodes, et, npe, conn.shape[0], it, 0, ptr(conn), dim, ptr(xyz),
             options({"feature_angle": feature_angle, "vertex_only": vertex_only}), ctypes.byref(h))
        return cls(h)

    @property
    def num_vertices(self):
        n = i64()
        call("graph_size", self._h, ctypes.byref(n), None)
        return n.value

    @property
    def num_edges(self):
        m = i64()
        call("graph_size", self._h, None, ctypes.byref(m))
        return m.value

    def adjacency(self):
        """(indptr, indices): the adjacency in CSR form, rows sorted."""
        n, m = self.num_vertices, self.num_edges
        off = np.empty(n + 1, np.int64)
        adj = np.empty(2 * m, np.int64)
        call("graph_adjacency", self._h, _lib.INT64, 0, ptr(off), off.size, ptr(adj), adj.size)
        return off, adj

    def classes(self):
        """Boundary class per vertex: 0 interior, 1 face, 2 edge, 3 corner."""
        c = np.empty(self.num_vertices, np.int32)
        call("graph_get_classes", self._h, c.size, ptr(c))
        return c

    def dirichlet(self):
        """True for each vertex that came from a Dirichlet row."""
        d = np.empty(self.num_vertices, np.int32)
        call("graph_get_dirichlet", self._h, d.size, ptr(d))
        return d.astype(bool)

    def set_classes(self, classes):
        c = np.ascontiguousarray(classes, dtype=np.int32)
        call("graph_set_classes", self._h, c.size, ptr(c))

    def set_priority(self, values):
        v = np.ascontiguousarray(values, dtype=np.float64)
        call("graph_set_priority", self._h, v.size, ptr(v))

    def set_coordinates(self, coords):
        xyz = np.ascontiguousarray(coords, dtype=np.float64)
        call("graph_set_coordinates", self._h, xyz.shape[1], xyz.shape[0], ptr(xyz))


class Level:
    """One level of a result: nvertices, the set (bool per vertex; all
    False for a coloring),
    aggregate (id per vertex, -1 none; None where the level has none),
    roots (the root of every aggregate), colors (None unless colored)."""

    def __init__(self, nvertices, set, aggregate, roots, colors, rounds):
        self.nvertices, self.set, self.aggregate = nvertices, set, aggregate
        self.roots, self.colors, self.rounds = roots, colors, rounds

    @property
    def naggregates(self):
        return 0 if self.roots is None else len(self.roots)

    def __repr__(self):
        return "Level(nvertices=%d, set_size=%d, naggregates=%d)" % (
            self.nvertices, int(self.set.sum()), self.naggregates)


def _levels(h):
    """The levels of a result handle, copied out; the handle is destroyed."""
    try:
        nl = i64()
        call("result_num_levels", h, ctypes.byref(nl))
        out = []
        for lv in range(nl.value):
            n, ss, na, nc, rounds = i64(), i64(), i64(), i64(), i64()
            call("result_level_info", h, lv, *(ctypes.byref(x) for x in (n, ss, na, nc, rounds)))
            flags = np.zeros(n.value, np.int32)
            if not nc.value:  # a coloring holds no set
                call("result_set_flags", h, lv, n.value, ptr(flags))
            agg = roots = colors = None
            if na.value:
                agg = np.empty(n.value, np.int64)
                call("result_aggregates", h, lv, _lib.INT64, 0, n.value, ptr(agg))
                roots = np.empty(na.value, np.int64)
                call("result_aggregate_roots", h, lv, _lib.INT64, 0, na.value, ptr(roots), None)
            if nc.value:
                colors = np.empty(n.value, np.int32)
                call("result_colors", h, lv, 0, n.value, ptr(colors))
            out.append(Level(n.value, flags.astype(bool), agg, roots, colors, rounds.value))
        return out
    finally:
        _lib.lib.misgrid_result_destroy(_lib.context(), h)


def _run(fn, graph, kw):
    h = H()
    call(fn, graph._h, options(kw), ctypes.byref(h))
    return _levels(h)


def mis(graph, distance=1, priority=None, seed=None, device=None, threads=None):
    """A maximal independent set: a bool array, True for members. The
    same set on every device and thread count."""
    return _run("mis", graph, dict(distance=distance, priority=priority, seed=seed,
                                   device=device, threads=threads))[0].set


def aggregates(graph, priority=None, seed=None, device=None, threads=None):
    """Aggregates around a distance-2 MIS: (aggregate id per vertex, roots)."""
    lv = _run("mis", graph, dict(distance=2, priority=priority, seed=seed, device=device,
                                 threads=threads))[0]
    return lv.aggregate, lv.roots


def aggregate(graph, flags):
    """Aggregates around a caller's distance-2 independent set (bool per vertex)."""
    f = np.ascontiguousarray(flags, dtype=np.int32)
    h = H()
    call("aggregate", graph._h, f.size, ptr(f), ctypes.byref(h))
    lv = _levels(h)[0]
    return lv.aggregate, lv.roots


def color(graph, distance=1, priority=None, seed=None, device=None, threads=None):
    """A coloring by repeated MIS: color id (from 0) per vertex."""
    return _run("color", graph, dict(distance=distance, priority=priority, seed=seed,
                                     device=device, threads=threads))[0].colors


def hierarchy(graph, distance=None, priority=None, seed=None, min_vertices=None,
              max_levels=None, device=None, threads=None):
    """Coarse grids: a list of Level, level 0 the graph itself; the
    aggregates of level l are the vertices of level l+1."""
    return _run("hierarchy", graph, dict(distance=distance, priority=priority, seed=seed,
                                         min_vertices=min_vertices, max_levels=max_levels,
                                         device=device, threads=threads))


def verify(graph, flags, distance=1):
    """(valid, reason): whether flags mark a maximal independent set."""
    f = np.ascontiguousarray(flags, dtype=np.int32)
    ok = i32()
    reason = ctypes.create_string_buffer(512)
    call("verify", graph._h, f.size, ptr(f), distance, ctypes.byref(ok), reason, len(reason))
    return bool(ok.value), reason.value.decode()


def write_vtu(graph, path, **mis_options):
    """Writes the graph (it needs coordinates) as a VTK .vtu file with its
    boundary classes; with MIS options (distance=2, priority=...), also
    the set and aggregates of that MIS."""
    h = H()
    if mis_options:
        call("mis", graph._h, options(mis_options), ctypes.byref(h))
    try:
        call("write_vtu", graph._h, h, str(path).encode(), b"")
    finally:
        if h:
            _lib.lib.misgrid_result_destroy(_lib.context(), h)
