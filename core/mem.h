/* core/mem.h — memory for large, long-lived buffers that forked children
 * never see.
 *
 * The runtime forks a supervisor for every sandbox run (a tool call, a
 * verification). A fork copies the parent's page tables and write-protects
 * every private page, so afterwards each page the parent writes costs it a
 * fault and, with threads on other CPUs, a TLB shoot-down. For the sampler's
 * KV cache and activations, rewritten at every decoding step, that was more
 * kernel time than the decoding itself (eval: 5 min system against 3.5 min
 * user). Buffers from rlvr_mem_alloc are mapped with MADV_DONTFORK: a child
 * does not inherit them, so forking neither copies nor protects them.
 *
 * Only for memory no forked child reads: sandbox children run runtime code on
 * their own small arguments, never on model state.
 *
 * Under AddressSanitizer the buffers come from the heap instead (inherited by
 * forks), so that ASan still checks every access to them. */
#ifndef RLVR_CORE_MEM_H
#define RLVR_CORE_MEM_H

#include <stddef.h>

/* 1 when buffers are kept from forked children (not under AddressSanitizer). */
#if defined(__SANITIZE_ADDRESS__)
#define RLVR_MEM_FORK_PRIVATE 0
#else
#define RLVR_MEM_FORK_PRIVATE 1
#endif

/* `bytes` of zeroed memory, aligned to 64 bytes, not inherited by fork.
 * NULL (with errno set) when the mapping fails; bytes = 0 gives a valid
 * pointer to an empty buffer. */
void *rlvr_mem_alloc(size_t bytes);

/* Frees a buffer from rlvr_mem_alloc; NULL is ignored. */
void rlvr_mem_free(void *p);

/* Gives the whole pages inside [p, p + bytes) of a buffer from
 * rlvr_mem_alloc back to the kernel (MADV_DONTNEED): they stop counting in
 * the process's memory and read as 0 afterwards (writing them takes fresh
 * zeroed pages). The partial pages at either end keep their contents. */
void rlvr_mem_release(void *p, size_t bytes);

#endif
