"""Tests of the misgrid Python module (unittest; pytest runs them too).

Run from the repository: python3 -m pytest python/tests (or
python3 -m unittest discover python/tests). The library is found as the
module says (MISGRID_LIBRARY, pkg-config, cabi/build).
"""

import gc
import os
import sys
import unittest

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import cg

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import misgrid  # noqa: E402


def laplacian2d(n):
    """The 5-point Laplacian of an n x n grid, as CSR."""
    t = sp.diags([-1, 2, -1], [-1, 0, 1], shape=(n, n))
    return (sp.kron(sp.identity(n), t) + sp.kron(t, sp.identity(n))).tocsr()


def q1_elasticity2d(n, clamped=True):
    """Plane-strain Q1 elasticity on an n x n element unit square, clamped
    on x = 0 (rows and columns eliminated), with node coordinates; free
    floating (singular, b None) without clamped."""
    E, nu = 1.0, 0.3
    lam, mu = E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))
    g = 1 / np.sqrt(3)
    sx, sy = np.array([-1, 1, 1, -1]), np.array([-1, -1, 1, 1])
    h = 1.0 / n
    ke = np.zeros((8, 8))
    for qx, qy in zip(sx * g, sy * g):
        dN = np.array([sx * (1 + sy * qy) / 4, sy * (1 + sx * qx) / 4]) * (2 / h)  # (2, 4)
        B = np.zeros((3, 8))
        B[0, 0::2], B[1, 1::2] = dN[0], dN[1]
        B[2, 0::2], B[2, 1::2] = dN[1], dN[0]
        D = np.array([[lam + 2 * mu, lam, 0], [lam, lam + 2 * mu, 0], [0, 0, mu]])
        ke += B.T @ D @ B * (h * h / 4)
    p = n + 1
    rows, cols, vals = [], [], []
    for j in range(n):
        for i in range(n):
            nodes = [j * p + i, j * p + i + 1, (j + 1) * p + i + 1, (j + 1) * p + i]
            dofs = np.array([[2 * v, 2 * v + 1] for v in nodes]).ravel()
            rows.append(np.repeat(dofs, 8))
            cols.append(np.tile(dofs, 8))
            vals.append(ke.ravel())
    A = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(2 * p * p,) * 2)
    xy = np.array([[i * h, j * h] for j in range(p) for i in range(p)])
    if not clamped:
        return A.tocsr(), None, xy
    keep = np.repeat(xy[:, 0] > 0, 2)
    D = sp.diags(keep.astype(float))
    A = (D @ A @ D + sp.diags((~keep).astype(float))).tocsr()
    b = np.where(keep, np.tile([0.0, -1.0], p * p), 0.0)
    return A, b, xy


def structured_tets(n):
    """A unit cube of n^3 cubes, 6 tetrahedra each: (conn, coords)."""
    p = n + 1
    idx = lambda i, j, k: (k * p + j) * p + i  # noqa: E731
    tets = []
    for k in range(n):
        for j in range(n):
            for i in range(n):
                c = [idx(i + a, j + b, k + d) for d in (0, 1) for b in (0, 1) for a in (0, 1)]
                for t in ((0, 1, 3, 7), (0, 1, 5, 7), (0, 2, 3, 7), (0, 2, 6, 7), (0, 4, 5, 7), (0, 4, 6, 7)):
                    tets.append([c[x] for x in t])
    xyz = np.array([[i, j, k] for k in range(p) for j in range(p) for i in range(p)], float) / n
    return np.array(tets), xyz


def neighbours(g):
    off, adj = g.adjacency()
    return [adj[off[v]:off[v + 1]] for v in range(len(off) - 1)]


class GraphTest(unittest.TestCase):
    def test_mis_is_maximal_independent(self):
        g = misgrid.Graph.from_matrix(laplacian2d(20))
        self.assertEqual((g.num_vertices, g.num_edges), (400, 2 * 20 * 19))
        nb = neighbours(g)
        for distance in (1, 2):
            s = misgrid.mis(g, distance=distance, priority="boundary")
            self.assertEqual(s.dtype, bool)
            for v in range(400):
                near = set(nb[v]) if distance == 1 else set(nb[v]).union(*(nb[u] for u in nb[v])) - {v}
                if s[v]:
                    self.assertFalse(any(s[u] for u in near), "vertex %d and a neighbour both in the set" % v)
                else:
                    self.assertTrue(any(s[u] for u in near), "vertex %d could join the set" % v)
            self.assertEqual(misgrid.verify(g, s, distance), (True, ""))
        # The corners come first under priority=boundary.
        s = misgrid.mis(g, distance=2, priority="boundary")
        self.assertTrue(all(s[[0, 19, 380, 399]]))
        valid, reason = misgrid.verify(g, np.zeros(400, bool), 1)
        self.assertFalse(valid)
        self.assertIn("vertex", reason)

    def test_int64_indices_and_pattern_agree(self):
        A = laplacian2d(12)
        B = A.copy()
        B.indptr, B.indices = B.indptr.astype(np.int64), B.indices.astype(np.int64)
        s1 = misgrid.mis(misgrid.Graph.from_matrix(A), distance=2, seed=3)
        s2 = misgrid.mis(misgrid.Graph.from_matrix(B, pattern=True), distance=2, seed=3)
        np.testing.assert_array_equal(s1, s2)

    def test_aggregates(self):
        g = misgrid.Graph.from_matrix(laplacian2d(16))
        agg, roots = misgrid.aggregates(g, priority="boundary")
        s = misgrid.mis(g, distance=2, priority="boundary")
        np.testing.assert_array_equal(np.flatnonzero(s), roots)
        self.assertEqual(agg.min(), 0)
        self.assertEqual(agg.max(), len(roots) - 1)
        np.testing.assert_array_equal(agg[roots], np.arange(len(roots)))
        nb = neighbours(g)
        for v in range(g.num_vertices):  # each vertex within distance 2 of its root
            r = roots[agg[v]]
            self.assertTrue(v == r or r in nb[v] or any(r in nb[u] for u in nb[v]))
        agg2, roots2 = misgrid.aggregate(g, s)
        np.testing.assert_array_equal(agg, agg2)
        np.testing.assert_array_equal(roots, roots2)

    def test_color(self):
        g = misgrid.Graph.from_matrix(laplacian2d(10))
        c = misgrid.color(g)
        off, adj = g.adjacency()
        src = np.repeat(np.arange(g.num_vertices), np.diff(off))
        self.assertFalse(np.any(c[src] == c[adj]))
        self.assertLessEqual(c.max() + 1, 5)

    def test_hierarchy(self):
        conn, xyz = structured_tets(6)
        g = misgrid.Graph.from_elements(conn, "tet4", coords=xyz)
        self.assertEqual(g.num_vertices, 343)
        cls = g.classes()
        self.assertEqual(int(np.sum(cls == 3)), 8)  # the cube's corners
        self.assertEqual(int(np.sum(cls == 2)), 12 * 5)  # edge nodes, corners excluded
        levels = misgrid.hierarchy(g, min_vertices=4)
        self.assertGreaterEqual(len(levels), 2)
        self.assertEqual(levels[0].nvertices, 343)
        for fine, coarse in zip(levels, levels[1:]):
            self.assertEqual(coarse.nvertices, fine.naggregates)
            self.assertLess(coarse.nvertices, fine.nvertices)

    def test_write_vtu(self):
        import tempfile
        conn, xyz = structured_tets(2)
        g = misgrid.Graph.from_elements(conn, "tet4", coords=xyz)
        g.set_coordinates(xyz)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "g.vtu")
            misgrid.write_vtu(g, path, distance=2)
            text = open(path).read()
        self.assertIn("UnstructuredGrid", text)
        self.assertIn('Name="aggregate"', text)


class SolverTest(unittest.TestCase):
    def test_poisson(self):
        A = laplacian2d(40)
        b = np.ones(A.shape[0])
        s = misgrid.Solver(A, tol=1e-10)
        x, info = s.solve(b)
        self.assertTrue(info.converged)
        self.assertLess(np.linalg.norm(b - A @ x) / np.linalg.norm(b), 1e-10)
        self.assertLess(info.iterations, 30)
        self.assertEqual(len(info.residuals), info.iterations + 1)
        self.assertAlmostEqual(info.residuals[-1], info.residual)
        meta = s.info()
        self.assertGreaterEqual(meta["levels"], 2)
        self.assertEqual(s.levels()[0], (1600, A.nnz, 1))
        # The preconditioner is symmetric, and works as scipy's M.
        rng = np.random.default_rng(1)
        u, v = rng.standard_normal(1600), rng.standard_normal(1600)
        self.assertAlmostEqual(u @ s.apply(v), v @ s.apply(u), delta=1e-10 * abs(u @ s.apply(v)))
        its = []
        y, rc = cg(A, b, M=s.aslinearoperator(), callback=lambda _: its.append(1), **_cg_tol(1e-10))
        self.assertEqual(rc, 0)
        self.assertLess(len(its), 30)
        # New values, same pattern: the same iteration count for 3A.
        s.update(3 * A)
        x3, info3 = s.solve(3 * b)
        self.assertEqual(info3.iterations, info.iterations)
        with self.assertRaises(ValueError):
            s.update(laplacian2d(41))

    def test_elasticity_rigid_body_modes(self):
        A, b, xy = q1_elasticity2d(24)
        plain = misgrid.Solver(A, block_size=2).solve(b)[1]
        rbm = misgrid.Solver(A, block_size=2, coordinates=xy).solve(b)[1]
        self.assertTrue(rbm.converged)
        self.assertLess(rbm.iterations, plain.iterations)
        # The same modes passed as vectors.
        n = xy.shape[0]
        Z = np.zeros((2 * n, 3))
        Z[0::2, 0], Z[1::2, 1] = 1, 1
        Z[0::2, 2], Z[1::2, 2] = -xy[:, 1], xy[:, 0]
        vec = misgrid.Solver(A, block_size=2, nullspace=Z).solve(b)[1]
        self.assertLessEqual(abs(vec.iterations - rbm.iterations), 2)

    def check_singular(self, A, K, **kw):
        """A x = A xe converges to the tolerance with the kernel K found by
        the setup and given; x is orthogonal to K; b plus a kernel vector
        is InconsistentError. Returns the iterations."""
        rng = np.random.default_rng(2)
        b = A @ rng.standard_normal(A.shape[0])
        its = []
        for kernel in (None, K):
            x, info = misgrid.Solver(A, kernel=kernel, tol=1e-9, **kw).solve(b)
            true = np.linalg.norm(b - A @ x) / np.linalg.norm(b)
            self.assertTrue(info.converged, info)
            self.assertLess(true, 1e-9)
            self.assertAlmostEqual(info.residual, true, delta=1e-3 * true)
            self.assertLess(np.abs(K.T @ x).max(), 1e-8 * np.linalg.norm(x) * np.linalg.norm(K, axis=0).max())
            its.append(info.iterations)
        s = misgrid.Solver(A, kernel=K, tol=1e-9, **kw)
        with self.assertRaises(misgrid.InconsistentError) as e:
            s.solve(b + 0.1 * K[:, -1])
        self.assertIn("inconsistent with the kernel", str(e.exception))
        return its

    def test_singular_neumann_poisson(self):
        L = laplacian2d(30).tolil()
        L.setdiag(0)
        A = (L - sp.diags(np.asarray(L.sum(axis=1)).ravel())).tocsr()  # rows sum to zero
        its = self.check_singular(A, np.ones((A.shape[0], 1)))
        self.assertLess(max(its), 30)
        with self.assertRaises(ValueError):
            misgrid.Solver(A, kernel=np.ones((A.shape[0] + 1, 1)))
        with self.assertRaises(misgrid.InputError) as e:  # NaN: refused by the library
            misgrid.Solver(A, kernel=np.full(A.shape[0], np.nan))
        self.assertIn("NaN", str(e.exception))

    def test_singular_free_elasticity(self):
        A, _, xy = q1_elasticity2d(16, clamped=False)
        n = xy.shape[0]
        K = np.zeros((2 * n, 3))
        K[0::2, 0], K[1::2, 1] = 1, 1
        K[0::2, 2], K[1::2, 2] = -xy[:, 1], xy[:, 0]
        its = self.check_singular(A, K, block_size=2, coordinates=xy)
        self.assertLess(max(its), 40)

    def test_module_solve(self):
        A = laplacian2d(8)
        x, info = misgrid.solve(A, np.ones(64), tol=1e-12, smoother="jacobi")
        self.assertTrue(info.converged)
        np.testing.assert_allclose(A @ x, np.ones(64), atol=1e-10)


class ErrorTest(unittest.TestCase):
    def assertMessage(self, ctx, *words):
        for w in words:
            self.assertIn(w, str(ctx.exception))

    def test_errors_carry_misgrid_message(self):
        A = laplacian2d(5)
        with self.assertRaises(misgrid.InputError) as e:
            misgrid.mis(misgrid.Graph.from_matrix(A), distance=3)
        self.assertMessage(e, "distance", "MISGRID_ERR_OPTION")
        self.assertEqual(e.exception.status, "MISGRID_ERR_OPTION")
        with self.assertRaises(misgrid.InputError) as e:
            misgrid.Solver(A, no_such_key=1)
        self.assertMessage(e, "no_such_key")
        B = A.copy()
        B.data[3] = np.nan
        with self.assertRaises(misgrid.MisgridError) as e:
            misgrid.Graph.from_matrix(B)
        self.assertMessage(e, "misgrid_graph_from_csr")
        with self.assertRaises(misgrid.MisgridError) as e:
            misgrid.Solver(-A)
        self.assertMessage(e, "misgrid_solver_setup")
        conn, xyz = structured_tets(1)
        conn[0, 0] = 99
        with self.assertRaises(misgrid.InputError) as e:
            misgrid.Graph.from_elements(conn, "tet4", coords=xyz)
        self.assertMessage(e, "conn", "99")
        with self.assertRaises(ValueError):
            misgrid.Graph.from_matrix(sp.csr_matrix((3, 4)))
        with self.assertRaises(ValueError):
            misgrid.Graph.from_elements(conn[:, :3], "tet4")
        with self.assertRaises(ValueError):
            misgrid.Solver(A).solve(np.ones(7))

    def test_threads(self):
        """Threads get the single-threaded results and their own messages."""
        import threading
        A = laplacian2d(30)
        want = misgrid.mis(misgrid.Graph.from_matrix(A), distance=2, priority="boundary")
        got, errors = [None] * 4, [None] * 4

        def work(i):
            got[i] = misgrid.mis(misgrid.Graph.from_matrix(A), distance=2, priority="boundary")
            try:
                misgrid.mis(misgrid.Graph.from_matrix(A), seed="x%d" % i)
            except misgrid.InputError as e:
                errors[i] = str(e)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for i in range(4):
            np.testing.assert_array_equal(got[i], want)
            self.assertIn('"x%d"' % i, errors[i])

    def test_no_handles_leak(self):
        gc.collect()
        before = misgrid.handle_count()
        A = laplacian2d(6)
        g = misgrid.Graph.from_matrix(A)
        misgrid.hierarchy(g)
        s = misgrid.Solver(A)
        self.assertGreater(misgrid.handle_count(), before)
        del g, s
        gc.collect()
        self.assertEqual(misgrid.handle_count(), before)

    def test_help_and_version(self):
        self.assertRegex(misgrid.version(), r"^\d+\.\d+\.\d+$")
        self.assertIn("smoother", misgrid.option_help())


class PetscTest(unittest.TestCase):
    """misgrid.petsc.register in a running petsc4py (skipped without it)."""

    def test_register_and_solve(self):
        try:
            from petsc4py import PETSc
        except ImportError:
            self.skipTest("petsc4py is not installed")
        import misgrid.petsc
        try:
            misgrid.petsc.plugin_path()
        except FileNotFoundError as e:
            self.skipTest(str(e))
        misgrid.petsc.register()
        A = laplacian2d(30)
        M = PETSc.Mat().createAIJ(A.shape, csr=(A.indptr, A.indices, A.data), comm=PETSc.COMM_SELF)
        b, x = M.createVecLeft(), M.createVecRight()
        b.set(1.0)
        ksp = PETSc.KSP().create(PETSc.COMM_SELF)
        ksp.setOperators(M)
        ksp.setType("cg")
        ksp.getPC().setType("misgrid")
        ksp.setTolerances(rtol=1e-10)
        ksp.solve(b, x)
        self.assertGreater(ksp.getConvergedReason(), 0)
        self.assertLess(ksp.getIterationNumber(), 20)
        np.testing.assert_allclose(A @ x.getArray(), np.ones(900), atol=1e-7)
        # A bad option is a PETSc error carrying misgrid's message.
        ksp2 = PETSc.KSP().create(PETSc.COMM_SELF)
        ksp2.getPC().setType("misgrid")
        opts = PETSc.Options()
        opts["pc_misgrid_smoother"] = "bogus"
        try:
            with self.assertRaises(PETSc.Error):
                ksp2.getPC().setFromOptions()
        finally:
            del opts["pc_misgrid_smoother"]


def _cg_tol(t):
    """scipy renamed cg's tol to rtol in 1.12; Debian 12 has 1.10."""
    import inspect
    return {"rtol": t, "atol": 0.0} if "rtol" in inspect.signature(cg).parameters else {"tol": t, "atol": 0.0}


if __name__ == "__main__":
    unittest.main()
