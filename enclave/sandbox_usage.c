/* enclave/sandbox_usage.c — measuring a run from its init.
 *
 * cgroups would need delegation the verifier may not have, so a run's
 * run-wide limits (CPU, memory, processes) are enforced by sampling: the
 * run has a PID namespace of its own, so every numeric entry of its /proc
 * but init's is one of its processes. Init calls these between reaps; the
 * kernel's rlimits are the backstops between two samples. */
#include "enclave/sandbox_internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* One process's CPU time (with its reaped children) and resident pages from
 * /proc/PID/stat; false when it is gone or unreadable. */
static bool read_stat(long pid, double *cpu_ticks, long long *rss_pages) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return false;
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    if (!p) return false;
    /* after ")": state ppid pgrp session tty tpgid flags minflt cminflt
     * majflt cmajflt utime stime cutime cstime priority nice threads
     * itrealvalue starttime vsize rss */
    char state;
    unsigned long long ut, st, cut, cst, vsize;
    long long rss;
    if (sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu %*d %*d %*d %*d %*u %llu %lld",
               &state, &ut, &st, &cut, &cst, &vsize, &rss) != 7)
        return false;
    *cpu_ticks = (double)(ut + st + cut + cst);
    *rss_pages = rss;
    return true;
}

void rlvr_sb_sample_run(rlvr_sb_sample *s, long ticks_per_s, long page) {
    s->procs = 0;
    s->cpu_s = 0;
    s->rss = 0;
    s->rss_max = 0;
    DIR *d = opendir("/proc");
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 1) continue;
        double ticks;
        long long rss;
        if (!read_stat(pid, &ticks, &rss)) continue;
        s->procs++;
        s->cpu_s += ticks / (double)ticks_per_s;
        if (rss > 0) s->rss += rss * page;
        if (rss * page > s->rss_max) s->rss_max = rss * page;
    }
    closedir(d);
}

/* /proc's numeric entries, without reading them (tens of microseconds where
 * rlvr_sb_sample_run takes a millisecond in a fork bomb). */
int rlvr_sb_count_processes(void) {
    int n = 0;
    DIR *d = opendir("/proc");
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        n += !*end && pid > 1;
    }
    closedir(d);
    return n;
}

double rlvr_sb_rusage_cpu(const struct rusage *ru) {
    return (double)ru->ru_utime.tv_sec + 1e-6 * (double)ru->ru_utime.tv_usec + (double)ru->ru_stime.tv_sec +
           1e-6 * (double)ru->ru_stime.tv_usec;
}

bool rlvr_sb_nearly_full(const char *path) {
    struct statvfs v;
    if (statvfs(path, &v) != 0) return false;
    double free_bytes = (double)v.f_bavail * (double)v.f_frsize;
    return free_bytes < 128.0 * 1024 || (v.f_files > 0 && v.f_favail == 0);
}
