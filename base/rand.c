/* rand.c - the counter-based RNG (base/hg_base.h); the inline parts are in
 * the header so that CUDA kernels compile the same lines.
 *
 * Stateless uniform in [0,1). Exact formula (all arithmetic on uint64_t,
 * wrapping mod 2^64; G = 0x9E3779B97F4A7C15):
 *   key = mix64(seed ^ mix64(stream + G))
 *   h   = mix64(key + (index + 1) * G)      (splitmix64's index-th output
 *                                            from state key)
 *   u   = (float)(h >> 40) * 2^-24          (top 24 bits, exact in f32)
 * mix64(z) (hg_mix64, splitmix64's finaliser, Steele, Lea, Flood 2014):
 *           z = (z ^ z>>30) * 0xBF58476D1CE4E5B9;
 *           z = (z ^ z>>27) * 0x94D049BB133111EB; return z ^ z>>31.
 * A CUDA port is the same lines with unsigned long long. */
#include "base/hg_base.h"

float hg_rand_uniform(uint64_t seed, uint64_t stream, uint64_t index)
{
    return hg_rand_u(hg_rand_key(seed, stream), index);
}
