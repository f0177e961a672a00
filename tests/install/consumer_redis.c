/*
 * A downstream program of wirekit-redis: an entity cache (core) whose shared tier is the
 * Redis store (add-on). With WK_REDIS_URL set it pings that server; without, it checks that
 * a store pointed at a closed port opens (connections are lazy) and reports the failed ping
 * as WK_ERR_IO.
 */
#include <stdio.h>
#include <stdlib.h>

#include <wirekit/redis.h>
#include <wirekit/wirekit.h>

int main(void)
{
    const char *url = getenv("WK_REDIS_URL");
    bool live = url != NULL && *url != '\0';
    wk_redis_opts o = {0};
    o.url = live ? url : "redis://127.0.0.1:1";
    o.no_subscribe = true;
    wk_redis_store *s = NULL;
    wk_error err = {0};
    if (wk_redis_store_new(&o, &s, &err) != WK_OK) {
        fprintf(stderr, "open: %s\n", err.msg);
        return 1;
    }
    wk_status st = wk_redis_store_ping(s, &err);
    int ok = live ? st == WK_OK : st == WK_ERR_IO;
    ok = ok && wk_redis_store_iface(s) != NULL;
    wk_redis_store_free(s);
    if (!ok) {
        fprintf(stderr, "ping: %s (%s)\n", wk_status_str(st), err.msg ? err.msg : "");
        return 1;
    }
    printf("wirekit-redis ok (%s)\n", live ? "ping" : "refused connection reported");
    return 0;
}
