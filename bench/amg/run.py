#!/usr/bin/python3
"""Compare misgrid's AMG with PETSc GAMG, hypre BoomerAMG and Jacobi-PCG.

Assembles Q1 hexahedral finite-element problems with scipy, writes them as
Matrix Market files (matrix, right-hand side, node coordinates), and solves
each with every solver on one thread: PCG to a relative residual of 1e-8
(unpreconditioned 2-norm, zero initial guess) for the right-hand side of a
random exact solution. Prints a Markdown table and writes results.json.

Problems:
  poisson     -Δu = f on the unit cube, Dirichlet on the whole boundary,
              n elements per side, (n-1)^3 unknowns
  elasticity  isotropic linear elasticity (E = 1, ν = 0.3) on the unit
              cube clamped at x = 0, 3 dofs per node, rigid-body modes as
              the near-nullspace, 3 n (n+1)^2 unknowns

Run through run.sh, which installs the Debian packages and builds misgrid.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import scipy.sparse as sp

GAUSS = (-1 / np.sqrt(3), 1 / np.sqrt(3))


def q1_grads(xi, h):
    """Gradients of the 8 trilinear shape functions at xi, element side h.
    Local node a sits at corner bits (a&1, a>>1&1, a>>2&1)."""
    g = np.zeros((8, 3))
    for a in range(8):
        s = [2 * ((a >> d) & 1) - 1 for d in range(3)]
        for d in range(3):
            v = s[d] / 2
            for e in range(3):
                if e != d:
                    v *= (1 + s[e] * xi[e]) / 2
            g[a, d] = v * 2 / h
    return g


def quad_points():
    for q in range(8):
        yield (GAUSS[q & 1], GAUSS[(q >> 1) & 1], GAUSS[(q >> 2) & 1])


def element_laplace(h):
    k = np.zeros((8, 8))
    w = (h / 2) ** 3
    for xi in quad_points():
        g = q1_grads(xi, h)
        k += g @ g.T * w
    return k


def element_elasticity(h, E=1.0, nu=0.3):
    lam = E * nu / ((1 + nu) * (1 - 2 * nu))
    mu = E / (2 * (1 + nu))
    k = np.zeros((24, 24))
    w = (h / 2) ** 3
    for xi in quad_points():
        g = q1_grads(xi, h)
        for a in range(8):
            for b in range(8):
                blk = lam * np.outer(g[a], g[b]) + mu * np.outer(g[b], g[a])
                blk += mu * (g[a] @ g[b]) * np.eye(3)
                k[3 * a:3 * a + 3, 3 * b:3 * b + 3] += blk * w
    return k


def connectivity(n):
    m = n + 1
    e = np.arange(n)
    i, j, k = np.meshgrid(e, e, e, indexing="ij")
    base = (i + m * (j + m * k)).transpose(2, 1, 0).ravel()  # x fastest
    offs = np.array([(a & 1) + m * (((a >> 1) & 1) + m * ((a >> 2) & 1)) for a in range(8)])
    return base[:, None] + offs[None, :]


def node_coords(n):
    m = n + 1
    c = np.arange(m) / n
    x = np.tile(c, m * m)
    y = np.tile(np.repeat(c, m), m)
    z = np.repeat(c, m * m)
    return np.column_stack([x, y, z])


def assemble(conn, ke, ndof):
    ne, k = conn.shape
    rows = np.repeat(conn, k, axis=1).ravel()
    cols = np.tile(conn, (1, k)).ravel()
    vals = np.tile(ke.ravel(), ne)
    a = sp.coo_matrix((vals, (rows, cols)), shape=(ndof, ndof)).tocsr()
    a.sum_duplicates()
    a.sort_indices()
    return a


def poisson(n):
    conn = connectivity(n)
    m = n + 1
    xyz = node_coords(n)
    a = assemble(conn, element_laplace(1 / n), m ** 3)
    idx = np.round(xyz * n).astype(int)
    free = np.flatnonzero(np.all((idx > 0) & (idx < n), axis=1))
    return a[free][:, free].tocsr(), xyz[free], 1


def elasticity(n):
    conn = connectivity(n)
    m = n + 1
    conn3 = (3 * conn[:, :, None] + np.arange(3)).reshape(conn.shape[0], 24)
    xyz = node_coords(n)
    a = assemble(conn3, element_elasticity(1 / n), 3 * m ** 3)
    free_nodes = np.flatnonzero(xyz[:, 0] > 0.5 / n)
    free = (3 * free_nodes[:, None] + np.arange(3)).ravel()
    return a[free][:, free].tocsr(), xyz[free_nodes], 3


def write_mtx(path, a):
    """Symmetric coordinate file: the lower triangle, exact values."""
    low = sp.tril(a).tocoo()
    with open(path, "w") as f:
        f.write("%%MatrixMarket matrix coordinate real symmetric\n")
        f.write(f"{a.shape[0]} {a.shape[1]} {low.nnz}\n")
        np.savetxt(f, np.column_stack([low.row + 1, low.col + 1, low.data]), fmt="%d %d %.17g")


def write_array(path, data):
    data = np.atleast_2d(np.asarray(data, dtype=float).T).T  # rows × cols
    with open(path, "w") as f:
        f.write("%%MatrixMarket matrix array real general\n")
        f.write(f"{data.shape[0]} {data.shape[1]}\n")
        np.savetxt(f, data.ravel(order="F"), fmt="%.17g")


def problem_files(name, n, outdir):
    """Assemble (or reuse) the files of one problem; return paths and data."""
    stem = os.path.join(outdir, f"{name}{n}")
    paths = {k: f"{stem}_{k}.mtx" for k in ("A", "b", "coords", "x")}
    t0 = time.perf_counter()
    a, xyz, bs = poisson(n) if name == "poisson" else elasticity(n)
    rng = np.random.default_rng(12345)
    xs = rng.uniform(-1, 1, a.shape[0])
    b = a @ xs
    if not all(os.path.exists(p) for p in paths.values()):
        write_mtx(paths["A"], a)
        write_array(paths["b"], b)
        write_array(paths["coords"], xyz)
        write_array(paths["x"], xs)
    log(f"{name} n={n}: {a.shape[0]} unknowns, {a.nnz} nonzeros ({time.perf_counter() - t0:.1f} s)")
    return paths, a, b, xyz, bs


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def petsc_solve(PETSc, a, b, xyz, bs, pc_opts, label, reuse_opts=None):
    """KSPCG with the given PC options; times setup and solve separately."""
    opts = PETSc.Options()
    prefix = f"{label.replace('-', '_')}_"
    base = {"ksp_type": "cg", "ksp_rtol": "1e-8", "ksp_atol": "1e-50",
            "ksp_norm_type": "unpreconditioned", "ksp_max_it": "2000"}
    base.update(pc_opts)
    for k, v in base.items():
        opts[prefix + k] = v
    A = PETSc.Mat().createAIJ(size=a.shape, csr=(a.indptr.astype(PETSc.IntType),
                                                 a.indices.astype(PETSc.IntType), a.data))
    A.setBlockSize(bs)
    A.assemble()
    if bs == 3:
        cv = PETSc.Vec().createWithArray(xyz.ravel().copy())
        cv.setBlockSize(3)
        A.setNearNullSpace(PETSc.NullSpace().createRigidBody(cv))
    B = A.createVecLeft()
    B.setArray(b)
    X = A.createVecRight()
    ksp = PETSc.KSP().create()
    ksp.setOptionsPrefix(prefix)
    ksp.setOperators(A)
    ksp.setFromOptions()
    X.set(0)
    t0 = time.perf_counter()
    ksp.setUp()
    t1 = time.perf_counter()
    ksp.solve(B, X)
    t2 = time.perf_counter()
    r = B.duplicate()
    A.mult(X, r)
    r.aypx(-1, B)
    res = {"solver": label, "iterations": ksp.getIterationNumber(),
           "converged": ksp.getConvergedReason() > 0,
           "setup_s": t1 - t0, "solve_s": t2 - t1,
           "final_residual": r.norm() / B.norm(),
           "operator_complexity": petsc_complexity(ksp)}
    if reuse_opts is not None:
        # New values, same pattern: A and b doubled, same solution.
        for k, v in reuse_opts.items():
            opts[prefix + k] = v
        ksp.setFromOptions()
        A.scale(2.0)
        B.scale(2.0)
        ksp.setOperators(A)
        t0 = time.perf_counter()
        ksp.setUp()
        res["update_s"] = time.perf_counter() - t0
        X.set(0)
        ksp.solve(B, X)
        res["update_iterations"] = ksp.getIterationNumber()
    ksp.destroy()
    A.destroy()
    return res


def petsc_complexity(ksp):
    pc = ksp.getPC()
    if pc.getType() not in ("gamg", "mg"):
        return None
    try:
        nl = pc.getMGLevels()
        tot = 0.0
        fine = None
        for l in range(nl):
            op = pc.getMGSmoother(l).getOperators()[0] if l > 0 else pc.getMGCoarseSolve().getOperators()[0]
            nz = op.getInfo()["nz_used"]
            tot += nz
            if l == nl - 1:
                fine = nz
        return tot / fine
    except Exception as e:  # complexity is informative only
        log(f"operator complexity unavailable: {e}")
        return None


def misgrid_solve(exe, paths, bs, label, extra):
    cmd = [exe, "solve", "-b", paths["b"], "-json", "-update"]
    if bs == 3:
        cmd += ["-block_size", "3", "-coords", paths["coords"], "-nullspace", "rbm"]
    for kv in extra:
        cmd += ["-" + kv.split("=", 1)[0], kv.split("=", 1)[1]]
    cmd.append(paths["A"])  # flags go before the matrix
    env = dict(os.environ, GOMAXPROCS="1")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        log(f"{label} failed: {out.stderr.strip()}")
        return {"solver": label, "error": out.stderr.strip()}
    j = json.loads(out.stdout)
    return {"solver": label, "iterations": j["iterations"], "converged": j["converged"],
            "setup_s": j["setup_seconds"], "solve_s": j["solve_seconds"],
            "update_s": j.get("update_seconds"),
            "final_residual": j["final_residual"],
            "operator_complexity": j["operator_complexity"]}


def best_of(n, run):
    """Runs run() n times; keeps the smallest of each time (iterations are
    the same every time: every solver here is deterministic)."""
    best = run()
    for _ in range(n - 1):
        r = run()
        if "error" in r:
            return r
        for k in ("setup_s", "solve_s", "update_s"):
            if r.get(k) is not None and best.get(k) is not None:
                best[k] = min(best[k], r[k])
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--poisson", type=int, default=64, help="elements per side of the Poisson cube (0: skip)")
    ap.add_argument("--elasticity", type=int, default=32, help="elements per side of the elasticity cube (0: skip)")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (8 and 4) for a quick check")
    ap.add_argument("--misgrid", default="misgrid", help="misgrid executable")
    ap.add_argument("--out", default=None, help="directory for the problem files (default: a temporary one)")
    ap.add_argument("--solvers", default="gamg,hypre,jacobi,misgrid,misgrid-pairwise",
                    help="comma-separated subset of gamg, hypre, jacobi, misgrid, misgrid-pairwise")
    ap.add_argument("--json", default="results.json", help="where to write the results")
    ap.add_argument("-o", dest="misgrid_opts", action="append", default=[], metavar="KEY=VALUE",
                    help="extra misgrid AMG option for both misgrid runs (repeatable)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run every solver this many times and keep the fastest times (for busy machines)")
    args = ap.parse_args()
    if args.smoke:
        args.poisson, args.elasticity = min(args.poisson, 8), min(args.elasticity, 4)
        # Tiny problems fit the coarse solver whole; force a hierarchy.
        args.misgrid_opts = ["max_coarse=40"] + args.misgrid_opts
    solvers = set(args.solvers.split(","))

    import petsc4py
    petsc4py.init(sys.argv[:1])
    from petsc4py import PETSc
    has_hypre = PETSc.Sys.hasExternalPackage("hypre")

    outdir = args.out or tempfile.mkdtemp(prefix="misgrid-amg-")
    os.makedirs(outdir, exist_ok=True)
    results = []
    for name, n in (("poisson", args.poisson), ("elasticity", args.elasticity)):
        if n <= 0:
            continue
        paths, a, b, xyz, bs = problem_files(name, n, outdir)
        row = {"problem": f"{name} Q1 hex {n}^3", "dofs": a.shape[0], "nnz": a.nnz, "runs": []}
        if "gamg" in solvers:
            log("  PETSc GAMG")
            row["runs"].append(best_of(args.repeat, lambda: petsc_solve(
                PETSc, a, b, xyz, bs,
                {"pc_type": "gamg", "pc_gamg_type": "agg",
                 "mg_levels_ksp_type": "chebyshev", "mg_levels_pc_type": "jacobi"},
                "gamg", reuse_opts={"pc_gamg_reuse_interpolation": "true"})))
        if "hypre" in solvers:
            if has_hypre:
                log("  hypre BoomerAMG")
                row["runs"].append(best_of(args.repeat, lambda: petsc_solve(
                    PETSc, a, b, xyz, bs,
                    {"pc_type": "hypre", "pc_hypre_type": "boomeramg",
                     "pc_hypre_boomeramg_coarsen_type": "HMIS",
                     "pc_hypre_boomeramg_interp_type": "ext+i",
                     "pc_hypre_boomeramg_strong_threshold": "0.5"},
                    "boomeramg")))
            else:
                row["runs"].append({"solver": "boomeramg", "error": "this PETSc has no hypre"})
        if "jacobi" in solvers:
            log("  Jacobi-PCG")
            row["runs"].append(best_of(args.repeat, lambda: petsc_solve(
                PETSc, a, b, xyz, bs, {"pc_type": "jacobi"}, "jacobi")))
        if "misgrid" in solvers:
            log("  misgrid MIS-2")
            row["runs"].append(best_of(args.repeat, lambda: misgrid_solve(
                args.misgrid, paths, bs, "misgrid", args.misgrid_opts)))
        if "misgrid-pairwise" in solvers:
            log("  misgrid pairwise")
            row["runs"].append(best_of(args.repeat, lambda: misgrid_solve(
                args.misgrid, paths, bs, "misgrid-pairwise", ["aggregation=pairwise"] + args.misgrid_opts)))
        results.append(row)

    print("| problem | dofs | solver | its | setup s | solve s | setup+solve s | re-setup s | op. complexity | final rel. residual |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for row in results:
        for r in row["runs"]:
            if "error" in r:
                print(f"| {row['problem']} | {row['dofs']:,} | {r['solver']} | — | — | — | — | — | — | {r['error']} |")
                continue
            oc = f"{r['operator_complexity']:.3f}" if r.get("operator_complexity") else "—"
            up = f"{r['update_s']:.3f}" if r.get("update_s") is not None else "—"
            its = r["iterations"] if r["converged"] else f"{r['iterations']} (not converged)"
            print(f"| {row['problem']} | {row['dofs']:,} | {r['solver']} | {its} | {r['setup_s']:.3f} | "
                  f"{r['solve_s']:.3f} | {r['setup_s'] + r['solve_s']:.3f} | {up} | {oc} | {r['final_residual']:.1e} |")
    with open(args.json, "w") as f:
        json.dump({"petsc": ".".join(map(str, PETSc.Sys.getVersion())), "hypre": has_hypre,
                   "threads": 1, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
