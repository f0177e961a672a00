/* The library's version at run time (wk_version, wk_version_number), from the generated
 * wirekit/version.h that project(VERSION) defines. */
#include "wirekit/core.h"

const char *wk_version(void)
{
    return WK_VERSION_STRING;
}

int wk_version_number(void)
{
    return WK_VERSION_NUMBER;
}
