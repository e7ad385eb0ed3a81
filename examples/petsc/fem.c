/* fem.c - see fem.h. Sequential: every node lives on the calling rank. */
#include <math.h>

#include "fem.h"

/* Gradients of the 8 trilinear shape functions at the reference point
 * (xi, eta, zeta) in [-1, 1]^3, scaled to an element of size h (uniform
 * grid: the Jacobian is h/2 I). Corner a is at (sx[a], sy[a], sz[a]). */
static const int sx[8] = {-1, 1, 1, -1, -1, 1, 1, -1};
static const int sy[8] = {-1, -1, 1, 1, -1, -1, 1, 1};
static const int sz[8] = {-1, -1, -1, -1, 1, 1, 1, 1};

static void gradients(double xi, double eta, double zeta, double h, double g[8][3])
{
    for (int a = 0; a < 8; a++) {
        g[a][0] = sx[a] * (1 + sy[a] * eta) * (1 + sz[a] * zeta) / 8 * (2 / h);
        g[a][1] = sy[a] * (1 + sx[a] * xi) * (1 + sz[a] * zeta) / 8 * (2 / h);
        g[a][2] = sz[a] * (1 + sx[a] * xi) * (1 + sy[a] * eta) / 8 * (2 / h);
    }
}

/* element fills the 8*bs x 8*bs element matrix and the element load
 * vector of an element of size h, with 2x2x2 Gauss points. */
static void element(PetscBool elastic, double h, double *ke, double *fe)
{
    const double gp = 1 / sqrt(3.0), w = h * h * h / 8; /* weight 1 times det J */
    const double E = 1, nu = 0.3, lam = E * nu / ((1 + nu) * (1 - 2 * nu)), mu = E / (2 * (1 + nu));
    int          bs = elastic ? 3 : 1, m = 8 * bs;
    for (int i = 0; i < m * m; i++) ke[i] = 0;
    for (int i = 0; i < m; i++) fe[i] = 0;
    for (int q = 0; q < 8; q++) {
        double g[8][3];
        gradients(sx[q] * gp, sy[q] * gp, sz[q] * gp, h, g);
        for (int a = 0; a < 8; a++) {
            if (elastic) fe[3 * a + 2] -= w / 8; /* gravity: N_a sums to 1 */
            else fe[a] += w / 8;
            for (int b = 0; b < 8; b++) {
                double dot = g[a][0] * g[b][0] + g[a][1] * g[b][1] + g[a][2] * g[b][2];
                if (!elastic) {
                    ke[a * m + b] += w * dot;
                    continue;
                }
                /* K_ab,ij = lam g_a,i g_b,j + mu (g_a,j g_b,i + delta_ij g_a.g_b) */
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 3; j++)
                        ke[(3 * a + i) * m + 3 * b + j] += w * (lam * g[a][i] * g[b][j] + mu * (g[a][j] * g[b][i] + (i == j) * dot));
            }
        }
    }
}

PetscErrorCode FEMAssemble(MPI_Comm comm, int kind, PetscInt nx, PetscInt ny, PetscInt nz, const char *mattype, Problem *p)
{
    PetscBool elastic = (PetscBool)(kind & FEM_ELASTIC);
    PetscInt  px = nx + 1, py = ny + 1, pz = nz + 1, bs = elastic ? 3 : 1, n;
    double    h = 1.0 / (double)ny, ke[24 * 24], fe[24];
    PetscInt *rows, nrows = 0;
    PetscFunctionBeginUser;
    p->bs = bs;
    p->nnodes = px * py * pz;
    n = p->nnodes * bs;
    PetscCall(MatCreate(comm, &p->A));
    PetscCall(MatSetSizes(p->A, n, n, n, n));
    PetscCall(MatSetType(p->A, mattype));
    PetscCall(MatSetBlockSize(p->A, bs));
    PetscCall(MatSeqAIJSetPreallocation(p->A, 27 * bs, NULL));
    PetscCall(MatSeqBAIJSetPreallocation(p->A, bs, 27, NULL));
    PetscCall(MatSetOption(p->A, MAT_SYMMETRIC, PETSC_TRUE));
    PetscCall(MatCreateVecs(p->A, NULL, &p->b));
    PetscCall(PetscMalloc1(3 * p->nnodes, &p->coords));
    for (PetscInt k = 0; k < pz; k++)
        for (PetscInt j = 0; j < py; j++)
            for (PetscInt i = 0; i < px; i++) {
                PetscInt v = (k * py + j) * px + i;
                p->coords[3 * v] = i * h, p->coords[3 * v + 1] = j * h, p->coords[3 * v + 2] = k * h;
            }
    element(elastic, h, ke, fe);
    for (PetscInt k = 0; k < nz; k++)
        for (PetscInt j = 0; j < ny; j++)
            for (PetscInt i = 0; i < nx; i++) {
                PetscInt nodes[8];
                for (int a = 0; a < 8; a++) nodes[a] = ((k + (sz[a] > 0)) * py + j + (sy[a] > 0)) * px + i + (sx[a] > 0);
                PetscCall(MatSetValuesBlocked(p->A, 8, nodes, 8, nodes, ke, ADD_VALUES));
                PetscCall(VecSetValuesBlocked(p->b, 8, nodes, fe, ADD_VALUES));
            }
    PetscCall(MatAssemblyBegin(p->A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(p->A, MAT_FINAL_ASSEMBLY));
    PetscCall(VecAssemblyBegin(p->b));
    PetscCall(VecAssemblyEnd(p->b));
    if (kind & FEM_FREE) PetscFunctionReturn(0);
    /* Clamp the face x = 0: identity rows and zeroed columns keep A SPD. */
    PetscCall(PetscMalloc1(py * pz * bs, &rows));
    for (PetscInt k = 0; k < pz; k++)
        for (PetscInt j = 0; j < py; j++)
            for (PetscInt c = 0; c < bs; c++) rows[nrows++] = ((k * py + j) * px) * bs + c;
    PetscCall(MatZeroRowsColumns(p->A, nrows, rows, 1.0, NULL, NULL));
    for (PetscInt r = 0; r < nrows; r++) PetscCall(VecSetValue(p->b, rows[r], 0.0, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(p->b));
    PetscCall(VecAssemblyEnd(p->b));
    PetscCall(PetscFree(rows));
    PetscFunctionReturn(0);
}

PetscErrorCode FEMDestroy(Problem *p)
{
    PetscFunctionBeginUser;
    PetscCall(MatDestroy(&p->A));
    PetscCall(VecDestroy(&p->b));
    PetscCall(PetscFree(p->coords));
    PetscFunctionReturn(0);
}
