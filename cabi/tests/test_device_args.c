/* The device entries' argument checks (device graphs, device solver), on
 * any machine (no CUDA toolkit needed): NULL outputs and arrays, bad
 * sizes, handles of the wrong kind, and, without a GPU,
 * MISGRID_ERR_NOGPU. test_device.c and test_device_solver.c run the
 * entries on a GPU. */
#include <stdint.h>
#include <stdio.h>

#include "check.h"

int main(void) {
    misgrid_context ctx;
    CHECK_OK(NULL, misgrid_context_create(&ctx));
    int64_t handles0 = live_handles();
    int64_t rowptr[3] = {0, 1, 2};
    int32_t col[2] = {1, 0};
    misgrid_device_graph sentinel = (misgrid_device_graph)(uintptr_t)0x5a5a, dg = sentinel;

    CHECK_ERR(ctx, misgrid_device_graph_from_csr(ctx, NULL, 2, 2, rowptr, col, NULL), MISGRID_ERR_NULL, "graph");
    CHECK_ERR(ctx, misgrid_device_graph_from_csr(ctx, NULL, -2, 2, rowptr, col, &dg), MISGRID_ERR_RANGE, "negative");
    CHECK_ERR(ctx, misgrid_device_graph_from_csr(ctx, NULL, 2, -1, rowptr, col, &dg), MISGRID_ERR_RANGE, "nnz");
    CHECK_ERR(ctx, misgrid_device_graph_from_csr(ctx, NULL, 2, 2, NULL, col, &dg), MISGRID_ERR_NULL, "rowptr");
    /* Host arrays: not device memory, or no GPU at all. */
    misgrid_status st = misgrid_device_graph_from_csr(ctx, NULL, 2, 2, rowptr, col, &dg);
    CHECK(st == MISGRID_ERR_NOGPU || st == MISGRID_ERR_ARG, "host arrays: %s (%s)", misgrid_status_string(st),
          misgrid_error_message(ctx));
    CHECK(dg == sentinel, "the output graph was written on failure");

    /* A graph handle where a device graph is needed, and the reverse. */
    misgrid_graph g;
    CHECK_OK(ctx, misgrid_graph_from_csr(ctx, 2, 2, 2, MISGRID_INT64_INT32, 0, rowptr, col, MISGRID_PATTERN, NULL,
                                         NULL, &g));
    uint8_t flags[2] = {7, 7};
    int64_t size = -3;
    CHECK_ERR(ctx, misgrid_device_mis(ctx, (misgrid_device_graph)(uintptr_t)g, NULL, MISGRID_HOST, 2, flags, &size),
              MISGRID_ERR_HANDLE, "misgrid_graph handle");
    CHECK_ERR(ctx, misgrid_device_graph_destroy(ctx, (misgrid_device_graph)(uintptr_t)g), MISGRID_ERR_HANDLE,
              "misgrid_graph handle");
    misgrid_result r;
    CHECK_ERR(ctx, misgrid_device_hierarchy(ctx, 0, NULL, &r), MISGRID_ERR_NULL, "graph");
    CHECK_ERR(ctx, misgrid_device_hierarchy(ctx, 0, NULL, NULL), MISGRID_ERR_NULL, "result");
    CHECK(flags[0] == 7 && flags[1] == 7 && size == -3, "a failed call wrote its outputs");
    CHECK_OK(ctx, misgrid_graph_destroy(ctx, g));

    /* Giving kept memory back works with or without a GPU, twice. */
    CHECK_OK(ctx, misgrid_release_device_memory(ctx));
    CHECK_OK(ctx, misgrid_release_device_memory(ctx));

    /* The device solver entries (misgrid_device_solver_*). */
    misgrid_solver s;
    int32_t rp32[3] = {0, 1, 2};
    double val[2] = {2, 2};
    CHECK_OK(ctx, misgrid_solver_create(ctx, NULL, &s));
    CHECK_ERR(ctx, misgrid_device_solver_setup(ctx, s, NULL, -2, 2, MISGRID_INT32, rp32, col, val), MISGRID_ERR_RANGE,
              "negative");
    CHECK_ERR(ctx, misgrid_device_solver_setup(ctx, s, NULL, 2, 2, 9, rp32, col, val), MISGRID_ERR_ARG, "index_type");
    CHECK_ERR(ctx, misgrid_device_solver_setup(ctx, s, NULL, 2, 2, MISGRID_INT32, NULL, col, val), MISGRID_ERR_NULL,
              "rowptr");
    st = misgrid_device_solver_setup(ctx, s, NULL, 2, 2, MISGRID_INT32, rp32, col, val);
    CHECK(st == MISGRID_ERR_NOGPU || st == MISGRID_ERR_ARG, "host arrays: %s (%s)", misgrid_status_string(st),
          misgrid_error_message(ctx));
    CHECK_ERR(ctx, misgrid_device_solver_update(ctx, s, 2, val), MISGRID_ERR_ARG, "no matrix yet");
    CHECK_ERR(ctx, misgrid_device_solver_setup(ctx, (misgrid_solver)(uintptr_t)dg, NULL, 2, 2, MISGRID_INT32, rp32, col,
                                               val),
              MISGRID_ERR_HANDLE, "solver");
    CHECK_OK(ctx, misgrid_solver_destroy(ctx, s));

    CHECK_HANDLES(handles0);
    CHECK_OK(NULL, misgrid_context_destroy(ctx));
    return check_report("test_device_args");
}
