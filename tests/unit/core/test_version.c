/* The version: defined once in CMake (project(VERSION)), seen the same way by the generated
 * header, the library at run time (wk_version, wk_version_number) and the build system. */
#include <stdio.h>
#include <string.h>

#include "wirekit/core.h"
#include "wk_test.h"

WK_TEST(test_version_runtime_equals_headers_and_project)
{
    CHECK(strcmp(wk_version(), WK_VERSION_STRING) == 0);
    CHECK(strcmp(wk_version(), WK_TEST_PROJECT_VERSION) == 0);
    CHECK_EQ(wk_version_number(), WK_VERSION_NUMBER);
}

WK_TEST(test_version_parts_compose_the_string_and_number)
{
    char text[32];
    snprintf(text, sizeof text, "%d.%d.%d", WK_VERSION_MAJOR, WK_VERSION_MINOR,
             WK_VERSION_PATCH);
    CHECK(strcmp(text, wk_version()) == 0);
    int major = 0, minor = 0, patch = 0;
    CHECK_EQ(sscanf(wk_version(), "%d.%d.%d", &major, &minor, &patch), 3);
    CHECK_EQ(wk_version_number(), major * 10000 + minor * 100 + patch);
    CHECK(minor < 100 && patch < 100); /* the number's encoding holds */
}
