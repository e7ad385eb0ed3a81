/* The public header compiles on its own as strict C99. */
#include "misgrid.h"

int header_c99_check(void);
int header_c99_check(void) {
    misgrid_context ctx = 0;
    misgrid_status st = MISGRID_OK;
    (void)ctx;
    return (int)st + MISGRID_VERSION_MAJOR * 0;
}
