/* core/sys.h — small facts about the machine and the clock. */
#ifndef RLVR_CORE_SYS_H
#define RLVR_CORE_SYS_H

/* Monotonic clock in seconds. */
double rlvr_now(void);

/* Physical cores (not hyper-threads) available to this process, at least 1.
 * Used as the default thread count for kernels. */
int rlvr_physical_cores(void);

/* Sets OpenMP's thread count to `n` (n <= 0: physical cores, or
 * OMP_NUM_THREADS when the user set it). Returns the count in use. */
int rlvr_threads_init(int n);

#endif
