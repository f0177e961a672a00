/*
 * Generic transcoding: pump events from any source into any sink. No tree is built, so
 * memory stays flat whatever the document size; format pairs that need speed can still add
 * fused paths, but this one is the reference behaviour.
 * Flow: any reader (a wk_source) -> wk_transcode -> any writer (a wk_sink).
 */
#include "wirekit/event.h"

/* Every event of src into dst until src's WK_ERR_EOF (WK_OK); a failure of either ends the
 * pump with its status, and err gets the failing side's own report. */
WK_API wk_status wk_transcode(const wk_source *src, const wk_sink *dst, wk_error *err)
{
    wk_event ev;
    for (;;) {
        wk_status st = src->next(src->self, &ev);
        if (st == WK_ERR_EOF) {
            return WK_OK;
        }
        if (st != WK_OK) {
            if (err != NULL) {
                src->error(src->self, err);
            }
            return st;
        }
        st = dst->event(dst->self, &ev);
        if (st != WK_OK) {
            if (err != NULL) {
                dst->error(dst->self, err);
            }
            return st;
        }
    }
}
