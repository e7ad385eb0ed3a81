// The public header compiles as C++ and declares C linkage.
#include "misgrid.h"

int header_cxx_check();
int header_cxx_check() {
    misgrid_context ctx = nullptr;
    misgrid_status (*f)(misgrid_context *) = &misgrid_context_create;
    (void)ctx;
    (void)f;
    return MISGRID_VERSION_MAJOR * 0;
}
