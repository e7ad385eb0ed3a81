#!/usr/bin/python3
"""Compare misgrid's AMG with PETSc GAMG, hypre BoomerAMG and Jacobi-PCG.

Assembles finite-element problems with scipy, writes them as Matrix Market
files (matrix, right-hand side, node coordinates) in a temporary directory,
and solves each with every solver on one thread, each solver in a process
of its own: PCG to a relative residual of 1e-8 (unpreconditioned 2-norm,
zero initial guess) for the right-hand side of a random exact solution.
Times are wall clock, best of --repeat; "total cpu s" is the process's
CPU time (user + system, every thread) over setup and solve, which a busy
machine disturbs less. Memory is the growth of the resident set over setup and first solve: the
high-water mark after the solve (VmHWM, reset through /proc/self/clear_refs
before setup) minus the resident set before setup, the matrix already
loaded. Prints a Markdown table; --json FILE also writes the results.

Problems (--problems, comma-separated; sizes with name:size):
  hex-poisson:n      -Δu = f, Q1 hexahedra on the unit cube, n elements per
                     side, Dirichlet on the whole boundary
  hex-elasticity:n   linear elasticity (E = 1, ν = 0.3), Q1 hexahedra, cube
                     clamped at x = 0, rigid-body modes
  tri-poisson:h      P1 triangles on plate.geo (Gmsh), mesh size h,
                     Dirichlet on x = 0
  tet-poisson:h      P1 tetrahedra on part.geo, Dirichlet on x = 0
  tet-jump:h         as tet-poisson, coefficient 1e4 on a checkerboard of
                     0.5-cubes, 1 elsewhere
  tet-elasticity:h   P1 tetrahedra on part.geo, clamped at x = 0

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


HERE = os.path.dirname(os.path.abspath(__file__))


def gmsh_mesh(geo, dim, h, outdir):
    """Meshes bench/amg/<geo> with Gmsh at size h; returns nodes and cells."""
    path = os.path.join(outdir, f"{os.path.splitext(geo)[0]}_{h}.msh")
    if not os.path.exists(path):
        subprocess.run(["gmsh", f"-{dim}", "-setnumber", "h", str(h), "-nt", "1", "-format", "msh22",
                        os.path.join(HERE, geo), "-o", path], check=True, capture_output=True)
    nodes, cells = read_msh2(path, 4 if dim == 3 else 2)
    used = np.unique(cells)
    renum = np.full(nodes.shape[0], -1)
    renum[used] = np.arange(used.size)
    return nodes[used][:, :dim], renum[cells]


def read_msh2(path, etype):
    """Nodes and cells of type etype (4: tetrahedra, 2: triangles) of an
    ASCII MSH 2.2 file."""
    with open(path) as f:
        lines = f.read().split("\n")
    i = lines.index("$Nodes")
    nn = int(lines[i + 1])
    raw = np.array(" ".join(lines[i + 2:i + 2 + nn]).split(), dtype=float).reshape(nn, 4)
    ids = raw[:, 0].astype(np.int64)
    index = np.full(ids.max() + 1, -1)
    index[ids] = np.arange(nn)
    j = lines.index("$Elements")
    ne = int(lines[j + 1])
    k = 4 if etype == 4 else 3
    cells = []
    for line in lines[j + 2:j + 2 + ne]:
        w = line.split()
        if int(w[1]) == etype:
            cells.append([int(t) for t in w[-k:]])
    return raw[:, 1:], index[np.array(cells)]


def p1_gradients(xyz, cells):
    """Gradients of the barycentric functions (ne × k × dim) and measures."""
    x = xyz[cells]
    d = x[:, 1:] - x[:, :1]
    inv = np.linalg.inv(d)
    g = np.empty(x.shape)
    g[:, 1:] = np.transpose(inv, (0, 2, 1))
    g[:, 0] = -g[:, 1:].sum(axis=1)
    fact = 6.0 if xyz.shape[1] == 3 else 2.0
    return g, np.abs(np.linalg.det(d)) / fact


def assemble_blocks(cells, ke, ndof):
    ne, k = cells.shape
    rows = np.repeat(cells, k, axis=1).ravel()
    cols = np.tile(cells, (1, k)).ravel()
    a = sp.coo_matrix((ke.ravel(), (rows, cols)), shape=(ndof, ndof)).tocsr()
    a.sum_duplicates()
    a.sort_indices()
    return a


def p1_poisson(xyz, cells, jump=False):
    g, vol = p1_gradients(xyz, cells)
    kappa = np.ones(len(cells))
    if jump:
        c = np.floor(xyz[cells].mean(axis=1) / 0.5).astype(int).sum(axis=1)
        kappa[c % 2 == 0] = 1e4
    ke = np.einsum("eid,ejd->eij", g, g) * (vol * kappa)[:, None, None]
    a = assemble_blocks(cells, ke, xyz.shape[0])
    free = np.flatnonzero(xyz[:, 0] > 1e-9)
    return a[free][:, free].tocsr(), xyz[free], 1


def p1_elasticity(xyz, cells, E=1.0, nu=0.3):
    g, vol = p1_gradients(xyz, cells)
    ne = len(cells)
    bm = np.zeros((ne, 6, 12))
    for a in range(4):
        gx, gy, gz = g[:, a, 0], g[:, a, 1], g[:, a, 2]
        c = 3 * a
        bm[:, 0, c], bm[:, 1, c + 1], bm[:, 2, c + 2] = gx, gy, gz
        bm[:, 3, c], bm[:, 3, c + 1] = gy, gx
        bm[:, 4, c + 1], bm[:, 4, c + 2] = gz, gy
        bm[:, 5, c], bm[:, 5, c + 2] = gz, gx
    lam = E * nu / ((1 + nu) * (1 - 2 * nu))
    mu = E / (2 * (1 + nu))
    d = np.zeros((6, 6))
    d[:3, :3] = lam
    d[np.arange(3), np.arange(3)] += 2 * mu
    d[np.arange(3, 6), np.arange(3, 6)] = mu
    ke = np.einsum("eki,kl,elj->eij", bm, d, bm) * vol[:, None, None]
    cells3 = (3 * cells[:, :, None] + np.arange(3)).reshape(ne, 12)
    a = assemble_blocks(cells3, ke, 3 * xyz.shape[0])
    free_nodes = np.flatnonzero(xyz[:, 0] > 1e-9)
    free = (3 * free_nodes[:, None] + np.arange(3)).ravel()
    return a[free][:, free].tocsr(), xyz[free_nodes], 3


PROBLEMS = {
    "hex-poisson": ("Poisson Q1 hex {}^3", lambda n, out: poisson(int(n))),
    "hex-elasticity": ("elasticity Q1 hex {}^3", lambda n, out: elasticity(int(n))),
    "tri-poisson": ("Poisson P1 tri, plate h={}", lambda h, out: p1_poisson(*gmsh_mesh("plate.geo", 2, h, out))),
    "tet-poisson": ("Poisson P1 tet, part h={}", lambda h, out: p1_poisson(*gmsh_mesh("part.geo", 3, h, out))),
    "tet-jump": ("jump 1e4 P1 tet, part h={}", lambda h, out: p1_poisson(*gmsh_mesh("part.geo", 3, h, out), jump=True)),
    "tet-elasticity": ("elasticity P1 tet, part h={}", lambda h, out: p1_elasticity(*gmsh_mesh("part.geo", 3, h, out))),
}

DEFAULT = ("hex-poisson:64,hex-elasticity:32,tri-poisson:0.035,tri-poisson:0.01,tet-poisson:0.05,"
           "tet-poisson:0.025,tet-jump:0.03,tet-elasticity:0.05,tet-elasticity:0.035")


def problem_files(name, size, outdir):
    """Assemble the files of one problem; return paths and data."""
    stem = os.path.join(outdir, f"{name}_{size}")
    paths = {k: f"{stem}_{k}.mtx" for k in ("A", "b", "coords")}
    paths["npz"] = f"{stem}.npz"
    t0 = time.perf_counter()
    a, xyz, bs = PROBLEMS[name][1](size, outdir)
    rng = np.random.default_rng(12345)
    xs = rng.uniform(-1, 1, a.shape[0])
    b = a @ xs
    write_mtx(paths["A"], a)
    write_array(paths["b"], b)
    write_array(paths["coords"], xyz)
    np.savez(paths["npz"], indptr=a.indptr, indices=a.indices, data=a.data, b=b, xyz=xyz, bs=bs)
    log(f"{name} {size}: {a.shape[0]} unknowns, {a.nnz} nonzeros ({time.perf_counter() - t0:.1f} s)")
    return paths, a, bs


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def proc_status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


SOLVERS = {
    "gamg": {"pc_type": "gamg", "pc_gamg_type": "agg",
             "mg_levels_ksp_type": "chebyshev", "mg_levels_pc_type": "jacobi"},
    "boomeramg": {"pc_type": "hypre", "pc_hypre_type": "boomeramg",
                  "pc_hypre_boomeramg_coarsen_type": "HMIS",
                  "pc_hypre_boomeramg_interp_type": "ext+i",
                  "pc_hypre_boomeramg_strong_threshold": "0.5"},
    "jacobi": {"pc_type": "jacobi"},
}


def petsc_worker(npz, label, repeat):
    """One PETSc solver on one problem, in this process; prints JSON."""
    import petsc4py
    petsc4py.init(sys.argv[:1])
    from petsc4py import PETSc
    if label == "boomeramg" and not PETSc.Sys.hasExternalPackage("hypre"):
        print(json.dumps({"solver": label, "error": "this PETSc has no hypre"}))
        return
    z = np.load(npz)
    indptr, indices, data, b, xyz, bs = (z[k] for k in ("indptr", "indices", "data", "b", "xyz", "bs"))
    bs = int(bs)
    opts = PETSc.Options()
    base = {"ksp_type": "cg", "ksp_rtol": "1e-8", "ksp_atol": "1e-50",
            "ksp_norm_type": "unpreconditioned", "ksp_max_it": "2000"}
    base.update(SOLVERS[label])
    for k, v in base.items():
        opts[k] = v
    n = len(indptr) - 1
    A = PETSc.Mat().createAIJ(size=(n, n), csr=(indptr.astype(PETSc.IntType),
                                                indices.astype(PETSc.IntType), data))
    A.setBlockSize(bs)
    A.assemble()
    if bs == 3:
        cv = PETSc.Vec().createWithArray(xyz.ravel().copy())
        cv.setBlockSize(3)
        A.setNearNullSpace(PETSc.NullSpace().createRigidBody(cv))
    B = A.createVecLeft()
    B.setArray(b)
    X = A.createVecRight()
    best = None
    for rep in range(repeat):
        ksp = PETSc.KSP().create()
        ksp.setOperators(A)
        ksp.setFromOptions()
        X.set(0)
        if rep == 0:
            rss0 = proc_status("VmRSS")
            reset_peak()
        t0, c0 = time.perf_counter(), time.process_time()
        ksp.setUp()
        t1, c1 = time.perf_counter(), time.process_time()
        ksp.solve(B, X)
        t2, c2 = time.perf_counter(), time.process_time()
        if rep == 0:
            mem = (proc_status("VmHWM") - rss0) / 1024
            r = B.duplicate()
            A.mult(X, r)
            r.aypx(-1, B)
            best = {"solver": label, "iterations": ksp.getIterationNumber(),
                    "converged": ksp.getConvergedReason() > 0,
                    "setup_s": t1 - t0, "solve_s": t2 - t1, "mem_mb": mem,
                    "setup_cpu_s": c1 - c0, "solve_cpu_s": c2 - c1,
                    "final_residual": r.norm() / B.norm(),
                    "operator_complexity": petsc_complexity(ksp)}
        else:
            best["setup_s"] = min(best["setup_s"], t1 - t0)
            best["solve_s"] = min(best["solve_s"], t2 - t1)
            best["setup_cpu_s"] = min(best["setup_cpu_s"], c1 - c0)
            best["solve_cpu_s"] = min(best["solve_cpu_s"], c2 - c1)
        ksp.destroy()
    print(json.dumps(best))


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


def run_json(cmd, label):
    out = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, GOMAXPROCS="1", OMP_NUM_THREADS="1"))
    if out.returncode != 0:
        log(f"{label} failed: {out.stderr.strip()[-400:]}")
        return {"solver": label, "error": out.stderr.strip()[-200:]}
    r = json.loads(out.stdout.strip().split("\n")[-1])
    r["solver"] = label
    return r


def misgrid_run(exe, paths, bs, label, extra, repeat):
    cmd = [exe, "-A", paths["A"], "-b", paths["b"], "-repeat", str(repeat)]
    if bs == 3:
        cmd += ["-coords", paths["coords"], "-o", "block_size=3"]
    for kv in extra:
        cmd += ["-o", kv]
    return run_json(cmd, label)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", default=DEFAULT, help="comma-separated name:size list (see above)")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: a check in seconds")
    ap.add_argument("--misgrid", default="misgrid-driver", help="the bench/amg/driver executable")
    ap.add_argument("--out", default=None, help="directory for the problem files (default: a temporary one)")
    ap.add_argument("--solvers", default="gamg,boomeramg,misgrid",
                    help="comma-separated subset of gamg, boomeramg, jacobi, misgrid, misgrid-pairwise")
    ap.add_argument("--json", default=None, help="also write the results to this file")
    ap.add_argument("-o", dest="misgrid_opts", action="append", default=[], metavar="KEY=VALUE",
                    help="extra misgrid AMG option for both misgrid runs (repeatable)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="setups and solves per solver; the fastest times are kept (memory: the first)")
    ap.add_argument("--worker", nargs=2, metavar=("NPZ", "SOLVER"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        petsc_worker(args.worker[0], args.worker[1], args.repeat)
        return
    if args.smoke:
        args.problems = "hex-poisson:8,hex-elasticity:4,tri-poisson:0.2,tet-elasticity:0.3"
    solvers = args.solvers.split(",")
    outdir = args.out or tempfile.mkdtemp(prefix="misgrid-amg-")
    os.makedirs(outdir, exist_ok=True)
    results = []
    for item in args.problems.split(","):
        name, size = item.split(":")
        paths, a, bs = problem_files(name, size, outdir)
        row = {"problem": PROBLEMS[name][0].format(size), "dofs": a.shape[0], "nnz": a.nnz, "runs": []}
        del a
        for s in solvers:
            log(f"  {s}")
            if s in SOLVERS:
                row["runs"].append(run_json([sys.executable, os.path.abspath(__file__), "--repeat", str(args.repeat),
                                             "--worker", paths["npz"], s], s))
            elif s == "misgrid":
                row["runs"].append(misgrid_run(args.misgrid, paths, bs, s, args.misgrid_opts, args.repeat))
            elif s == "misgrid-pairwise":
                row["runs"].append(misgrid_run(args.misgrid, paths, bs, s, ["aggregation=pairwise"] + args.misgrid_opts, args.repeat))
        results.append(row)
        print_table([row], header=len(results) == 1)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"threads": 1, "results": results}, f, indent=1)


def print_table(results, header=True):
    if header:
        print("| problem | dofs | solver | its | setup s | solve s | total s | setup cpu s | solve cpu s | total cpu s | memory MB | op. complexity | final rel. residual |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in results:
        for r in row["runs"]:
            if "error" in r:
                print(f"| {row['problem']} | {row['dofs']:,} | {r['solver']} | — | — | — | — | — | — | — | — | — | {r['error']} |")
                continue
            oc = f"{r['operator_complexity']:.3f}" if r.get("operator_complexity") else "—"
            its = r["iterations"] if r["converged"] else f"{r['iterations']} (not converged)"
            print(f"| {row['problem']} | {row['dofs']:,} | {r['solver']} | {its} | {r['setup_s']:.3f} | "
                  f"{r['solve_s']:.3f} | {r['setup_s'] + r['solve_s']:.3f} | "
                  f"{r['setup_cpu_s']:.3f} | {r['solve_cpu_s']:.3f} | "
                  f"{r['setup_cpu_s'] + r['solve_cpu_s']:.3f} | {r['mem_mb']:.1f} | {oc} | "
                  f"{r['final_residual']:.1e} |", flush=True)


if __name__ == "__main__":
    main()
