#include "core/sys.h"

#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double rlvr_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Counts distinct (physical id, core id) pairs of the CPUs we may run on. */
int rlvr_physical_cores(void) {
    cpu_set_t allowed;
    int n_allowed = 0;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) n_allowed = CPU_COUNT(&allowed);
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return n_allowed > 0 ? n_allowed : 1;
    char line[256];
    int cpu = -1, package = 0, n_cores = 0;
    int seen[1024][2];
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "processor : %d", &cpu) == 1) continue;
        if (sscanf(line, "physical id : %d", &package) == 1) continue;
        int core;
        if (sscanf(line, "core id : %d", &core) == 1 && cpu >= 0 && cpu < CPU_SETSIZE &&
            (n_allowed == 0 || CPU_ISSET(cpu, &allowed))) {
            int dup = 0;
            for (int i = 0; i < n_cores; i++) dup |= seen[i][0] == package && seen[i][1] == core;
            if (!dup && n_cores < 1024) {
                seen[n_cores][0] = package;
                seen[n_cores][1] = core;
                n_cores++;
            }
        }
    }
    fclose(f);
    if (n_cores == 0) n_cores = n_allowed;
    return n_cores > 0 ? n_cores : 1;
}

int rlvr_threads_init(int n) {
    if (n <= 0) {
        const char *env = getenv("OMP_NUM_THREADS");
        n = env && atoi(env) > 0 ? atoi(env) : rlvr_physical_cores();
    }
    omp_set_num_threads(n);
    return n;
}
