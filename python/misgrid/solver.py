"""misgrid's smoothed-aggregation AMG with PCG, from scipy.sparse matrices."""

import ctypes

import numpy as np

from . import _lib
from ._lib import H, call, f64, i32, i64, options, ptr
from .graph import _csr


class SolveInfo:
    """The outcome of Solver.solve: converged, iterations, residual (the
    true relative residual ||b - A x|| / ||b|| of the x returned) and
    residuals (the history, ||b - A x_k|| / ||b||)."""

    def __init__(self, converged, iterations, residual, residuals):
        self.converged, self.iterations = converged, iterations
        self.residual, self.residuals = residual, residuals

    def __repr__(self):
        return "SolveInfo(converged=%s, iterations=%d, residual=%.3g)" % (
            self.converged, self.iterations, self.residual)


def _columns(a, n, name):
    """a as n-row float64 columns in Fortran order (a 1-D a is one column)."""
    v = np.asfortranarray(a, dtype=np.float64)
    if v.ndim == 1:
        v = v.reshape(-1, 1, order="F")
    if v.ndim != 2 or v.shape[0] != n:
        raise ValueError("%s has shape %s, want (%d, k) for a matrix of %d rows" % (name, v.shape, n, n))
    return v


class Solver:
    """An AMG hierarchy for a symmetric positive definite scipy.sparse
    matrix A.

    coordinates (nnodes, dim) with block_size 2 or 3 gives rigid-body
    modes (nullspace="rbm"); nullspace may also be an (n, k) array of
    near-nullspace vectors. kernel, an (n, k) array, is the exact null
    space of a singular A (the constants of a pure-Neumann problem, the
    rigid-body modes of a free-floating body): solve projects it out and
    returns the x orthogonal to it, and raises InconsistentError for a b
    with a part in it. Left out, the setup finds the kernel when the
    coarsest operator is singular. Other keyword arguments are misgrid solver
    options (smoother="chebyshev", sweeps=2, theta=0.05, tol=1e-10,
    maxit=200, device="gpu", ...; misgrid.option_help() lists them).
    """

    def __init__(self, A, block_size=None, coordinates=None, nullspace=None, kernel=None, **opts):
        self._h = None
        n, indptr, indices, it, values = _csr(A)
        kw = dict(opts)
        if block_size is not None:
            kw["block_size"] = block_size
        vectors = None
        if isinstance(nullspace, str):
            kw["nullspace"] = nullspace
        elif nullspace is not None:
            vectors = _columns(nullspace, n, "nullspace")
            kw["nullspace"] = "vectors"
        elif coordinates is not None:
            kw["nullspace"] = "rbm"
        h = H()
        call("solver_create", options(kw), ctypes.byref(h))
        self._h = h
        if vectors is not None:
            call("solver_set_nullspace", h, n, vectors.shape[1], ptr(vectors))
        if kernel is not None:
            kern = _columns(kernel, n, "kernel")
            call("solver_set_kernel", h, n, kern.shape[1], ptr(kern))
        if coordinates is not None:
            xyz = np.ascontiguousarray(coordinates, dtype=np.float64)
            if xyz.ndim != 2:
                raise ValueError("coordinates must be (nnodes, dim), not shape %s" % (xyz.shape,))
            call("solver_set_coordinates", h, xyz.shape[1], xyz.shape[0], ptr(xyz))
        call("solver_setup", h, n, n, indptr[-1], it, 0, ptr(indptr), ptr(indices), _lib.FLOAT64,
             ptr(values))
        self.n = n
        self._pattern = (indptr, indices)

    def __del__(self):
        if getattr(self, "_h", None) and _lib.lib is not None:
            _lib.lib.misgrid_solver_destroy(_lib.context(), self._h)
            self._h = None

    def update(self, A):
        """New values with the same pattern: keeps the aggregates and
        redoes the numeric setup."""
        n, indptr, indices, _, values = _csr(A)
        ip, ix = self._pattern
        if n != self.n or not (np.array_equal(indptr, ip) and np.array_equal(indices, ix)):
            raise ValueError("update needs the pattern of the setup matrix (build a new Solver otherwise)")
        call("solver_update_values", self._h, values.size, _lib.FLOAT64, ptr(values))

    def _vec(self, b, name):
        b = np.ascontiguousarray(b, dtype=np.float64)
        if b.shape != (self.n,):
            raise ValueError("%s has shape %s, want (%d,)" % (name, b.shape, self.n))
        return b

    def solve(self, b, x0=None):
        """(x, SolveInfo): PCG on A x = b from x0 (zero by default). Not
        converging is not an error: info.converged says so."""
        b = self._vec(b, "b")
        x = np.zeros(self.n) if x0 is None else self._vec(x0, "x0").copy()
        conv, its, res = i32(), i64(), f64()
        call("solver_solve", self._h, self.n, ptr(b), ptr(x), ctypes.byref(conv), ctypes.byref(its),
             ctypes.byref(res))
        hist = np.empty(its.value + 1)
        call("solver_residuals", self._h, hist.size, ptr(hist), None)
        return x, SolveInfo(bool(conv.value), its.value, res.value, hist)

    def apply(self, r):
        """z = M^-1 r: one multigrid cycle (for scipy's cg as M)."""
        r = self._vec(r, "r")
        z = np.empty(self.n)
        call("solver_apply", self._h, self.n, ptr(r), ptr(z))
        return z

    def aslinearoperator(self):
        """The preconditioner as a scipy.sparse.linalg.LinearOperator."""
        from scipy.sparse.linalg import LinearOperator
        return LinearOperator((self.n, self.n), matvec=self.apply, dtype=np.float64)

    def info(self):
        """dict: levels, operator_complexity, grid_complexity, setup_seconds."""
        nl, oc, gc, secs = i64(), f64(), f64(), f64()
        call("solver_info", self._h, *(ctypes.byref(x) for x in (nl, oc, gc, secs)))
        return dict(levels=nl.value, operator_complexity=oc.value, grid_complexity=gc.value,
                    setup_seconds=secs.value)

    def levels(self):
        """One (rows, nonzeros, block_size) per level, 0 the matrix."""
        out = []
        for lv in range(self.info()["levels"]):
            r, nz, bs = i64(), i64(), i64()
            call("solver_level_info", self._h, lv, ctypes.byref(r), ctypes.byref(nz), ctypes.byref(bs))
            out.append((r.value, nz.value, bs.value))
        return out


def solve(A, b, **kw):
    """(x, SolveInfo): sets up a Solver for A (keywords as Solver) and solves."""
    return Solver(A, **kw).solve(b)
