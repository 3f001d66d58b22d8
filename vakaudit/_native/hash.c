/* Hashing: SHA-256 (x86 SHA extensions, else OpenSSL), two digests at once, hex.
 * Part of vakaudit._native._linescan: compiled inside linescan.c's translation unit (see there). */
#include "linescan.h"

/*
 * SHA-256 with the x86 SHA extensions (FIPS 180-4), for the two digests of every entries row: the
 * line's and its body's (a suffix of the line) are computed together, their blocks interleaved so
 * that the latency of the SHA round instructions is hidden (about twice OpenSSL's speed for two
 * digests). Used when the CPU has SHA, SSE4.1 and SSSE3 (use_shani), else OpenSSL's SHA256.
 */
#if defined(HAVE_AVX2_PATH)
#include <cpuid.h>
#define HAVE_SHANI_PATH 1

static const uint32_t SHA_K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define SHA_TARGET __attribute__((target("sha,sse4.1,ssse3")))

/* state (8 words) <-> the ABEF / CDGH register layout of the SHA instructions */
SHA_TARGET static inline void sha_load(const uint32_t st[8], __m128i *abef, __m128i *cdgh) {
    __m128i t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)st), 0xB1);
    __m128i s1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(st + 4)), 0x1B);
    *abef = _mm_alignr_epi8(t, s1, 8);
    *cdgh = _mm_blend_epi16(s1, t, 0xF0);
}

SHA_TARGET static inline void sha_store(uint32_t st[8], __m128i abef, __m128i cdgh) {
    __m128i t = _mm_shuffle_epi32(abef, 0x1B);
    cdgh = _mm_shuffle_epi32(cdgh, 0xB1);
    _mm_storeu_si128((__m128i *)st, _mm_blend_epi16(t, cdgh, 0xF0));
    _mm_storeu_si128((__m128i *)(st + 4), _mm_alignr_epi8(cdgh, t, 8));
}

#define SHA_ROUNDS4(S0, S1, W, i)                                                     \
    do {                                                                              \
        __m128i m_ = _mm_add_epi32(W, _mm_loadu_si128((const __m128i *)(SHA_K + 4 * (i)))); \
        S1 = _mm_sha256rnds2_epu32(S1, S0, m_);                                       \
        S0 = _mm_sha256rnds2_epu32(S0, S1, _mm_shuffle_epi32(m_, 0x0E));              \
    } while (0)

#define SHA_NEXT(W0, W1, W2, W3) \
    _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(W0, W1), _mm_alignr_epi8(W3, W2, 4)), W3)

/* n blocks of 64 bytes into one state */
SHA_TARGET static void sha_blocks1(uint32_t st[8], const unsigned char *p, size_t n) {
    const __m128i mask = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i a, c;
    sha_load(st, &a, &c);
    for (; n; n--, p += 64) {
        __m128i a0 = a, c0 = c;
        __m128i w0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)p), mask);
        __m128i w1 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16)), mask);
        __m128i w2 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 32)), mask);
        __m128i w3 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 48)), mask);
        for (int i = 0; i < 16; i++) {
            SHA_ROUNDS4(a, c, w0, i);
            __m128i w4 = i < 12 ? SHA_NEXT(w0, w1, w2, w3) : w0;
            w0 = w1, w1 = w2, w2 = w3, w3 = w4;
        }
        a = _mm_add_epi32(a, a0);
        c = _mm_add_epi32(c, c0);
    }
    sha_store(st, a, c);
}

/* n blocks of each of two streams, interleaved (the SHA round instructions' latency hides) */
SHA_TARGET static void sha_blocks2(uint32_t st[8], const unsigned char *p, uint32_t su[8], const unsigned char *q,
                                   size_t n) {
    const __m128i mask = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i a, c, b, d;
    sha_load(st, &a, &c);
    sha_load(su, &b, &d);
    for (; n; n--, p += 64, q += 64) {
        __m128i a0 = a, c0 = c, b0 = b, d0 = d;
        __m128i w0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)p), mask);
        __m128i w1 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16)), mask);
        __m128i w2 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 32)), mask);
        __m128i w3 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 48)), mask);
        __m128i v0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)q), mask);
        __m128i v1 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(q + 16)), mask);
        __m128i v2 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(q + 32)), mask);
        __m128i v3 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(q + 48)), mask);
        for (int i = 0; i < 16; i++) {
            SHA_ROUNDS4(a, c, w0, i);
            SHA_ROUNDS4(b, d, v0, i);
            __m128i w4 = i < 12 ? SHA_NEXT(w0, w1, w2, w3) : w0;
            __m128i v4 = i < 12 ? SHA_NEXT(v0, v1, v2, v3) : v0;
            w0 = w1, w1 = w2, w2 = w3, w3 = w4;
            v0 = v1, v1 = v2, v2 = v3, v3 = v4;
        }
        a = _mm_add_epi32(a, a0);
        c = _mm_add_epi32(c, c0);
        b = _mm_add_epi32(b, b0);
        d = _mm_add_epi32(d, d0);
    }
    sha_store(st, a, c);
    sha_store(su, b, d);
}

static const uint32_t SHA_H0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

/* the padded last one or two blocks of a message of len bytes whose tail (len % 64 bytes) is t */
static size_t sha_tail(const unsigned char *t, size_t len, unsigned char out[128]) {
    size_t r = len % 64;
    memcpy(out, t, r);
    out[r] = 0x80;
    size_t nb = r < 56 ? 1 : 2;
    memset(out + r + 1, 0, nb * 64 - r - 1 - 8);
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++) out[nb * 64 - 1 - i] = (unsigned char)(bits >> (8 * i));
    return nb;
}

static void sha_out(const uint32_t st[8], unsigned char md[32]) {
    for (int i = 0; i < 8; i++) {
        md[4 * i] = (unsigned char)(st[i] >> 24);
        md[4 * i + 1] = (unsigned char)(st[i] >> 16);
        md[4 * i + 2] = (unsigned char)(st[i] >> 8);
        md[4 * i + 3] = (unsigned char)st[i];
    }
}

/* SHA-256 of [p, p + n) and of [q, q + m) together */
static void sha256_pair_shani(const unsigned char *p, size_t n, const unsigned char *q, size_t m, unsigned char mp[32],
                        unsigned char mq[32]) {
    uint32_t s[8], u[8];
    memcpy(s, SHA_H0, 32);
    memcpy(u, SHA_H0, 32);
    size_t bn = n / 64, bm = m / 64, both = bn < bm ? bn : bm;
    sha_blocks2(s, p, u, q, both);
    if (bn > both) sha_blocks1(s, p + 64 * both, bn - both);
    if (bm > both) sha_blocks1(u, q + 64 * both, bm - both);
    unsigned char tp[128], tq[128];
    size_t kp = sha_tail(p + 64 * bn, n, tp), kq = sha_tail(q + 64 * bm, m, tq);
    if (kp == kq) {
        sha_blocks2(s, tp, u, tq, kp);
    } else {
        sha_blocks1(s, tp, kp);
        sha_blocks1(u, tq, kq);
    }
    sha_out(s, mp);
    sha_out(u, mq);
}

static int cpu_has_shani(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSE4_1) || !(c & bit_SSSE3)) return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    return (b >> 29) & 1; /* SHA */
}
#endif

static int use_shani; /* set at import when the CPU has the SHA extensions */

/* SHA-256 of one message: the SHA extensions when on, else OpenSSL's block functions (its one-shot
 * SHA256() looks the algorithm up on every call, ~0.5 us: as much as hashing 1 KB) */
static void sha256_one(cp p, size_t n, unsigned char md[32]) {
#if defined(HAVE_SHANI_PATH)
    if (use_shani) {
        uint32_t s[8];
        unsigned char t[128];
        memcpy(s, SHA_H0, 32);
        sha_blocks1(s, p, n / 64);
        sha_blocks1(s, t, sha_tail(p + 64 * (n / 64), n, t));
        sha_out(s, md);
        return;
    }
#endif
    SHA256_CTX c;
    SHA256_Init(&c);
    SHA256_Update(&c, p, n);
    SHA256_Final(md, &c);
}

static void sha256_pair(cp p, size_t n, cp q, size_t m, unsigned char mp[32], unsigned char mq[32]) {
#if defined(HAVE_SHANI_PATH)
    if (use_shani) {
        sha256_pair_shani(p, n, q, m, mp, mq);
        return;
    }
#endif
    sha256_one(p, n, mp);
    sha256_one(q, m, mq);
}

static const char HEX[] = "0123456789abcdef";

/* a digest in lowercase hex */
static void hex_of(const unsigned char md[32], char hex[64]) {
    for (int i = 0; i < SHA256_DIGEST_LENGTH; i++) {
        hex[2 * i] = HEX[md[i] >> 4];
        hex[2 * i + 1] = HEX[md[i] & 15];
    }
}

/* the lowercase hex SHA-256 of [data, data + len) */
static void hex64(cp data, size_t len, char hex[64]) {
    unsigned char md[SHA256_DIGEST_LENGTH];
    sha256_one(data, len, md);
    hex_of(md, hex);
}

static PyObject *hex_digest(const unsigned char *data, size_t len) {
    char hex[2 * SHA256_DIGEST_LENGTH];
    hex64(data, len, hex);
    return PyUnicode_FromStringAndSize(hex, sizeof hex);
}
