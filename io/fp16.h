/* io/fp16.h — internal: 16-bit float formats to float32, shared by the
 * weight readers (io/gguf.c, io/safetensors.c). Both conversions are exact
 * (every half and every bfloat16 is a float) and match numpy bit for bit,
 * NaN payloads included. Not part of the public io/ API. */
#ifndef RLVR_IO_FP16_H
#define RLVR_IO_FP16_H

#include <stdint.h>
#include <string.h>

static inline float rlvr_f32_from_bits(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* IEEE half to single; NaN payloads move up by 13 bits unchanged, as
 * numpy's conversion does. */
static inline float rlvr_half_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f) return rlvr_f32_from_bits(sign | 0x7f800000u | mant << 13);
    if (exp == 0) {
        /* zero or subnormal: mant * 2^-24 is exact in float */
        float v = (float)mant * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    return rlvr_f32_from_bits(sign | (exp + 112u) << 23 | mant << 13);
}

/* bfloat16 is the top half of a float32. */
static inline float rlvr_bf16_to_f32(uint16_t h) { return rlvr_f32_from_bits((uint32_t)h << 16); }

#endif
