/* The library's version at run time (wk_version, wk_version_number), from the generated
 * wirekit/version.h that project(VERSION) defines. */
#include "wirekit/core.h"

/* "MAJOR.MINOR.PATCH" of the library actually loaded (may differ from the headers'). */
const char *wk_version(void)
{
    return WK_VERSION_STRING;
}

/* MAJOR * 10000 + MINOR * 100 + PATCH of the library actually loaded. */
int wk_version_number(void)
{
    return WK_VERSION_NUMBER;
}
