/* Stopped backends of the stall tests: see pg_stopped.h. */
#include "pg_stopped.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pg_test_conn.h"

pid_t pg_stopped_backend_of(wk_pq_conn *c)
{
    return (pid_t)pg_test_count(c, "SELECT pg_backend_pid()");
}

pid_t pg_stopped_watchdog(pid_t backend)
{
    pid_t w = fork();
    if (w == 0) {
        sleep(PG_STOPPED_WATCHDOG_S);
        kill(backend, SIGCONT);
        _exit(0);
    }
    return w;
}

void pg_stopped_release(pid_t w, pid_t backend)
{
    kill(backend, SIGCONT);
    if (w > 0) {
        kill(w, SIGKILL);
        waitpid(w, NULL, 0);
    }
}
