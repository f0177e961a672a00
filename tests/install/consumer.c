/* Uses the installed headers and library through the umbrella header only. */
#include <stdio.h>
#include <string.h>

#include <wirekit/wirekit.h>

int main(void)
{
    wk_buf b;
    wk_buf_init(&b, NULL, 0);
    if (wk_buf_append(&b, "wirekit", 7) != WK_OK || !wk_utf8_valid(b.data, b.len, NULL)) {
        return 1;
    }
    /* the library it runs with is the one whose headers it was built with */
    if (strcmp(wk_version(), WK_VERSION_STRING) != 0 || wk_version_number() != WK_VERSION_NUMBER) {
        return 1;
    }
    printf("%.*s %s ok (%s)\n", (int)b.len, (const char *)b.data, wk_version(),
           wk_status_str(WK_OK));
    wk_buf_free(&b);
    return 0;
}
