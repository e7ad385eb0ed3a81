#!/usr/bin/python3
"""Linear elasticity of a mounting bracket in DOLFINx, solved with misgrid
(the PETSc plugin, -pc_type misgrid), GAMG and hypre BoomerAMG.

The part (bracket.geo) is meshed by Gmsh into tetrahedra; this script reads
the .msh file, builds P1 elasticity in DOLFINx (clamped on the back of the
wall, loaded by its weight and a downward traction on the free end of the
base), and solves A u = b with CG and each preconditioner, all given the
rigid-body near-nullspace through MatSetNearNullSpace. It prints
iterations, setup and solve seconds, and the difference of each solution
from GAMG's.

    python3 elasticity.py --size 0.1 --plugin ../../petsc/build/libmisgrid-petsc.so

The plugin is loaded into PETSc as a user would: -dll_append, passed to
petsc4py before DOLFINx initialises PETSc.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--size", type=float, default=0.12, help="Gmsh element size (default 0.12)")
    p.add_argument("--mesh", help="a Gmsh .msh file (format 2.2) instead of meshing bracket.geo")
    p.add_argument("--plugin", default=os.path.join(HERE, "..", "..", "petsc", "build", "libmisgrid-petsc.so"))
    p.add_argument("--pcs", default="gamg,hypre,misgrid", help="preconditioners, the first is the reference")
    p.add_argument("--rtol", type=float, default=1e-8)
    p.add_argument("--max-diff", type=float, default=1e-5,
                   help="fail when a solution differs from the first by more (relative 2-norm)")
    p.add_argument("--markdown", action="store_true", help="print the table in Markdown")
    p.add_argument("--repeat", type=int, default=1, help="solve this often with each solver, keep the least times")
    return p.parse_known_args()


args, petsc_args = parse_args()

import petsc4py  # noqa: E402

petsc4py.init([sys.argv[0], "-dll_append", os.path.abspath(args.plugin)] + petsc_args)

import numpy as np  # noqa: E402
import ufl  # noqa: E402
from dolfinx import fem, la, mesh  # noqa: E402
from dolfinx.fem.petsc import apply_lifting, assemble_matrix, assemble_vector, set_bc  # noqa: E402
from mpi4py import MPI  # noqa: E402
from petsc4py import PETSc  # noqa: E402


def read_msh22(path):
    """Nodes (n, 3) and tetrahedra (m, 4) of an ASCII Gmsh 2.2 file, the
    nodes renumbered from 0 in file order, unused ones dropped."""
    with open(path) as f:
        lines = iter(f.read().split("\n"))
    ids, xyz, tets = [], [], []
    for line in lines:
        if line == "$MeshFormat":
            version = next(lines).split()[0]
            if not version.startswith("2."):
                sys.exit("%s: Gmsh format %s, want 2.2 (gmsh -format msh22)" % (path, version))
        elif line == "$Nodes":
            for _ in range(int(next(lines))):
                w = next(lines).split()
                ids.append(int(w[0]))
                xyz.append([float(v) for v in w[1:4]])
        elif line == "$Elements":
            for _ in range(int(next(lines))):
                w = next(lines).split()
                if w[1] == "4":  # 4-node tetrahedron
                    tets.append([int(v) for v in w[3 + int(w[2]):]])
    ids, xyz, tets = np.array(ids), np.array(xyz), np.array(tets)
    pos = np.full(ids.max() + 1, -1)
    pos[ids] = np.arange(len(ids))
    tets = pos[tets]
    used = np.unique(tets)
    renum = np.full(len(ids), -1)
    renum[used] = np.arange(len(used))
    return xyz[used], renum[tets]


def make_mesh():
    if args.mesh:
        path = args.mesh
    else:
        path = os.path.join(tempfile.mkdtemp(prefix="bracket-"), "bracket.msh")
        subprocess.run(["gmsh", "-3", os.path.join(HERE, "bracket.geo"), "-setnumber", "size", str(args.size),
                        "-format", "msh22", "-o", path, "-v", "2"], check=True)
    x, cells = read_msh22(path)
    cell = ufl.Cell("tetrahedron", geometric_dimension=3)
    domain = ufl.Mesh(ufl.VectorElement("Lagrange", cell, 1))
    return mesh.create_mesh(MPI.COMM_WORLD, cells, x, domain)


def rigid_body_modes(V):
    """The six rigid-body modes of V, orthonormalised, as a MatNullSpace."""
    index_map, bs = V.dofmap.index_map, V.dofmap.index_map_bs
    vecs = [la.create_petsc_vector(index_map, bs) for _ in range(6)]
    x = V.tabulate_dof_coordinates()
    arrays = [v.getArray() for v in vecs]
    nodes = np.arange(index_map.size_local)
    for i in range(3):
        arrays[i][bs * nodes + i] = 1.0
    px, py, pz = x[nodes, 0], x[nodes, 1], x[nodes, 2]
    arrays[3][bs * nodes + 0], arrays[3][bs * nodes + 1] = -py, px
    arrays[4][bs * nodes + 0], arrays[4][bs * nodes + 2] = pz, -px
    arrays[5][bs * nodes + 2], arrays[5][bs * nodes + 1] = py, -pz
    for v, a in zip(vecs, arrays):
        v.setArray(a)
    la.orthonormalize(vecs)
    return PETSc.NullSpace().create(vectors=vecs)


def assemble(msh):
    """A, b and V for the bracket: E = 1 (scaled), nu = 0.3, clamped on x = 0."""
    V = fem.VectorFunctionSpace(msh, ("Lagrange", 1))
    E, nu = 1.0, 0.3
    mu, lam = E / (2 * (1 + nu)), E * nu / ((1 + nu) * (1 - 2 * nu))
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    eps = lambda w: ufl.sym(ufl.grad(w))  # noqa: E731
    sigma = lambda w: 2 * mu * eps(w) + lam * ufl.tr(eps(w)) * ufl.Identity(3)  # noqa: E731
    fdim = msh.topology.dim - 1
    clamped = mesh.locate_entities_boundary(msh, fdim, lambda x: np.isclose(x[0], 0.0))
    end = mesh.locate_entities_boundary(msh, fdim, lambda x: np.isclose(x[0], 4.0))
    tags = mesh.meshtags(msh, fdim, end, np.full(len(end), 1, dtype=np.int32))
    ds = ufl.Measure("ds", domain=msh, subdomain_data=tags)
    weight = fem.Constant(msh, np.array([0.0, 0.0, -1e-3]))
    traction = fem.Constant(msh, np.array([0.0, 0.0, -1e-2]))
    a = fem.form(ufl.inner(sigma(u), eps(v)) * ufl.dx)
    L = fem.form(ufl.dot(weight, v) * ufl.dx + ufl.dot(traction, v) * ds(1))
    zero = np.zeros(3, dtype=PETSc.ScalarType)
    bc = fem.dirichletbc(zero, fem.locate_dofs_topological(V, fdim, clamped), V)
    A = assemble_matrix(a, bcs=[bc])
    A.assemble()
    b = assemble_vector(L)
    apply_lifting(b, [a], bcs=[[bc]])
    b.ghostUpdate(addv=PETSc.InsertMode.ADD, mode=PETSc.ScatterMode.REVERSE)
    set_bc(b, [bc])
    A.setNearNullSpace(rigid_body_modes(V))
    return A, b, V, len(clamped), len(end)


def solve(A, b, pc_type):
    """(x, iterations, setup s, solve s) of CG with one preconditioner."""
    ksp = PETSc.KSP().create(A.getComm())
    ksp.setOptionsPrefix(pc_type + "_")
    ksp.setOperators(A)
    ksp.setType("cg")
    ksp.setNormType(PETSc.KSP.NormType.UNPRECONDITIONED)
    ksp.setTolerances(rtol=args.rtol, atol=1e-50, max_it=2000)
    ksp.getPC().setType(pc_type)
    ksp.setFromOptions()
    x = A.createVecRight()
    t0 = time.perf_counter()
    ksp.setUp()
    t1 = time.perf_counter()
    ksp.solve(b, x)
    t2 = time.perf_counter()
    if ksp.getConvergedReason() <= 0:
        sys.exit("%s did not converge: reason %d after %d iterations" % (pc_type, ksp.getConvergedReason(),
                                                                       ksp.getIterationNumber()))
    r = b.duplicate()
    A.mult(x, r)
    r.aypx(-1, b)
    true_res = r.norm() / b.norm()
    its = ksp.getIterationNumber()
    ksp.destroy()
    return x, its, t1 - t0, t2 - t1, true_res


def main():
    t0 = time.perf_counter()
    msh = make_mesh()
    A, b, V, nclamped, nend = assemble(msh)
    ndofs = V.dofmap.index_map.size_global * V.dofmap.index_map_bs
    print("bracket: %d tetrahedra, %d nodes, %d dofs (%s, block size %d); %d clamped facets, %d loaded; "
          "mesh and assembly %.1f s" % (msh.topology.index_map(3).size_global, V.dofmap.index_map.size_global, ndofs,
                                        A.getType(), A.getBlockSize(), nclamped, nend, time.perf_counter() - t0),
          flush=True)
    if nclamped == 0 or nend == 0:
        sys.exit("no clamped or loaded facets: the geometry changed")
    rows, ref = [], None
    for pc in args.pcs.split(","):
        runs = [solve(A, b, pc) for _ in range(args.repeat)]
        x, its, _, _, res = runs[0]
        setup, solve_s = min(r[2] for r in runs), min(r[3] for r in runs)
        diff = 0.0 if ref is None else (x - ref).norm() / ref.norm()
        ref = x if ref is None else ref
        rows.append((pc, its, setup, solve_s, res, diff))
    first = args.pcs.split(",")[0]
    if args.markdown:
        print("\n| problem | dofs | solver | its | setup s | solve s | true rel. residual | |u - u_%s|/|u_%s| |" % (first, first))
        print("|---|---|---|---|---|---|---|---|")
        for pc, its, setup, solve_s, res, diff in rows:
            print("| bracket elasticity (DOLFINx, P1 tets) | %d | %s | %d | %.3f | %.3f | %.1e | %.1e |"
                  % (ndofs, pc, its, setup, solve_s, res, diff))
    else:
        print("%-8s %5s %9s %9s %11s %11s" % ("solver", "its", "setup s", "solve s", "residual", "diff"))
        for pc, its, setup, solve_s, res, diff in rows:
            print("%-8s %5d %9.3f %9.3f %11.1e %11.1e" % (pc, its, setup, solve_s, res, diff))
    worst = max(r[5] for r in rows)
    if worst > args.max_diff:
        sys.exit("solutions differ by %.1e > %.1e" % (worst, args.max_diff))


if __name__ == "__main__":
    main()
