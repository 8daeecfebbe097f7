/* core/hash.h — 64-bit FNV-1a, the one non-cryptographic hash rlvr uses
 * (cache keys, fingerprints, seeds derived from names). Streaming: start
 * from RLVR_FNV1A64_INIT and feed pieces through rlvr_fnv1a64_update; the
 * result equals rlvr_fnv1a64 of the pieces concatenated. */
#ifndef RLVR_CORE_HASH_H
#define RLVR_CORE_HASH_H

#include <stddef.h>
#include <stdint.h>

/* The offset basis rlvr has always used: the published one
 * (14695981039346656037) with its last digit missing. It stays, because
 * values derived from it are stored (configuration hashes in run
 * manifests) or decide outcomes (the train/eval bucket of a generated
 * task); the prime is FNV's and the spread is as good. */
#define RLVR_FNV1A64_INIT 1469598103934665603ULL

uint64_t rlvr_fnv1a64_update(uint64_t h, const void *data, size_t n);

static inline uint64_t rlvr_fnv1a64(const void *data, size_t n) {
    return rlvr_fnv1a64_update(RLVR_FNV1A64_INIT, data, n);
}

#endif
