/* A library built without MPI (the default) exports
 * misgrid_mis_distributed and says how to get it. */
#include <stdint.h>

#include "check.h"

int main(void) {
    misgrid_context ctx = 0;
    CHECK_OK(ctx, misgrid_context_create(&ctx));
    int64_t comm = 0, rowptr[2] = {0, 0};
    int32_t flags[1];
    CHECK_ERR(ctx, misgrid_mis_distributed(ctx, &comm, 1, 0, 1, 0, MISGRID_INT64, 0, rowptr, NULL, NULL,
                                           "", flags, NULL, NULL),
              MISGRID_ERR_ARG, "libmisgrid was built without MPI (rebuild with make MPI=1)");
    CHECK_ERR(ctx, misgrid_mis_distributed_f(ctx, 0, 1, 0, 1, 0, MISGRID_INT64, 0, rowptr, NULL, NULL,
                                             "", flags, NULL, NULL),
              MISGRID_ERR_ARG, "built without MPI");
    CHECK_ERR(ctx, misgrid_mis_distributed(ctx, NULL, 1, 0, 1, 0, MISGRID_INT64, 0, rowptr, NULL, NULL,
                                           "", flags, NULL, NULL),
              MISGRID_ERR_NULL, "comm is NULL");
    misgrid_context_destroy(ctx);
    return check_report("test_mpi_off");
}
