/* The least any namespace sandbox pays to run a command: create the namespaces sbx creates
 * for the `workspace` profile (a user namespace first when not root), let the new PID 1 fork
 * once and execute the command, wait. No mounts, no Landlock, no seccomp, nothing else.
 * benches/overhead.sh builds it static, so that it also pays no dynamic loader.
 * Usage: floor CMD [ARGS...] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: floor CMD [ARGS...]\n");
        return 2;
    }
    uid_t uid = geteuid();
    gid_t gid = getegid();
    int flags = CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS;
    if (uid != 0)
        flags |= CLONE_NEWUSER;
    long pid = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
    if (pid < 0) {
        perror("clone");
        return 125;
    }
    if (pid == 0) {
        if (uid != 0) {
            char map[64];
            snprintf(map, sizeof map, "%u %u 1\n", uid, uid);
            if (write_file("/proc/self/setgroups", "deny") || write_file("/proc/self/uid_map", map))
                _exit(125);
            snprintf(map, sizeof map, "%u %u 1\n", gid, gid);
            if (write_file("/proc/self/gid_map", map))
                _exit(125);
        }
        pid_t cmd = fork();
        if (cmd == 0) {
            execvp(argv[1], argv + 1);
            _exit(127);
        }
        int st = 0;
        if (cmd < 0 || waitpid(cmd, &st, 0) < 0)
            _exit(125);
        _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    }
    int st = 0;
    if (waitpid(pid, &st, 0) < 0)
        return 125;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
