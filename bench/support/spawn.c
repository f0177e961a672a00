/*
 * Out-of-process peers: a peer that lives in another runtime (Node, Go) runs as a child
 * process that times its own loop and prints its figures on standard output; the suite reads
 * them line by line and records them beside the in-process rows. This is the one place that
 * starts such a child and collects its exit status.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

/* Contract in bench.h. */
FILE *wk_bench_spawn(char *const *argv, pid_t *pid)
{
    int fds[2];
    if (pipe(fds) != 0) {
        return NULL;
    }
    fflush(NULL); /* nothing buffered here is written twice by the child */
    *pid = fork();
    if (*pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return NULL;
    }
    if (*pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    FILE *out = fdopen(fds[0], "r");
    if (out == NULL) {
        close(fds[0]);
        waitpid(*pid, NULL, 0);
    }
    return out;
}

/* Contract in bench.h. */
int wk_bench_spawn_wait(FILE *out, pid_t pid)
{
    if (out != NULL) {
        fclose(out);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
        return -1;
    }
    return WEXITSTATUS(status);
}
