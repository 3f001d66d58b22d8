/*
 * vakaudit._native._linescan: one compiled pass over the lines of a vak session ledger.
 *
 * For every complete line (ending in LF) of a buffer it frames the line, computes the SHA-256 of its
 * bytes (the hash chain's line digest, ledger.md section 3), reads the envelope when it has the exact
 * layout vak's serializer writes ({"id":..,"parent_id":..,"ts":..[,"prev_hash":..][,"at_turn":..],
 * "kind":..}), validates the rest of the line as strict JSON (RFC 8259 grammar, strict UTF-8, nesting
 * at most 128 levels like serde_json's reader) and records the byte span of every top-level payload
 * member.
 *
 * A line is either "plain" (all of the above holds, and it is in the compact form vak writes: no
 * whitespace outside strings, no escaped surrogates, no number that could overflow a double, no
 * duplicate envelope key, no CR before the LF) or "deferred": the caller then reads it with the
 * reference Python path, which produces the exact finding. This module never decides that a line is
 * bad; it only vouches for lines that are certainly good, so both paths give identical results.
 *
 * scan_entries turns the plain lines of a ledger into rows of the entries table, written straight
 * into Arrow column buffers (EntryCols, which the reference reader's rows join in file order); the
 * line and body digests of a row are computed together (SHA extensions when the CPU has them).
 *
 * jsonl_columns applies the same validator to the JSONL sidecars (sandbox execution logs, activity
 * log, evidence and cost logs, ...): it reads a chunk of lines straight into Arrow column buffers for
 * vakaudit.artifacts._jsonl, or declines the whole chunk when any line or value is not the plain case.
 *
 * compact_part is the checkpoint reader's one-pass "compact" copy (vakaudit.artifacts._jsonstream):
 * a JSON document with its long strings replaced by placeholders and measured, piece by piece as the
 * document is read.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h> /* PyMemberDef (compact_part's measures); its T_INT and T_BOOL names are reused below */
enum { MEMBER_OBJECT_EX = T_OBJECT_EX, MEMBER_READONLY = READONLY };
#undef T_INT
#undef T_BOOL
#include <stdint.h>
#include <string.h>

#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/sha.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
#endif

#define MAX_DEPTH 128 /* serde_json's default recursion limit */

#define F_BODY_DIGEST 1 /* SHA-256 of the bytes after the envelope's kind value */
#define F_MEMBERS 2     /* (key, start, end, canonical) of every payload member */

typedef const unsigned char *cp;

static int use_avx2; /* set at import when the CPU has AVX2 (x86-64 builds with GCC or Clang) */
static int surrogate_pairs; /* 1 only while jsonl_columns runs: scan_string then accepts \uD8xx\uDCxx pairs */

/* printable ASCII other than '"' and '\\': bytes a string may hold without any check */
static unsigned char PLAIN[256];

static void init_tables(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    use_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("bmi");
#endif
    for (int c = 0x20; c < 0x80; c++) PLAIN[c] = 1;
    PLAIN['"'] = 0;
    PLAIN['\\'] = 0;
}

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

/* the lowercase hex SHA-256 of [data, data + len) */
static void hex64(cp data, size_t len, char hex[64]) {
    unsigned char md[SHA256_DIGEST_LENGTH];
    sha256_one(data, len, md);
    for (int i = 0; i < SHA256_DIGEST_LENGTH; i++) {
        hex[2 * i] = HEX[md[i] >> 4];
        hex[2 * i + 1] = HEX[md[i] & 15];
    }
}

static PyObject *hex_digest(const unsigned char *data, size_t len) {
    char hex[2 * SHA256_DIGEST_LENGTH];
    hex64(data, len, hex);
    return PyUnicode_FromStringAndSize(hex, sizeof hex);
}

/* Length of a strict UTF-8 sequence starting at p (its lead byte is >= 0x80), 0 when invalid. */
static int utf8_len(cp p, cp e) {
    unsigned char c = p[0];
    if (c >= 0xC2 && c <= 0xDF) {
        return (e - p >= 2 && (p[1] & 0xC0) == 0x80) ? 2 : 0;
    }
    if (c >= 0xE0 && c <= 0xEF) {
        if (e - p < 3 || (p[2] & 0xC0) != 0x80) return 0;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c == 0xE0) lo = 0xA0;      /* no overlong forms */
        else if (c == 0xED) hi = 0x9F; /* no UTF-16 surrogates */
        return (p[1] >= lo && p[1] <= hi) ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (e - p < 4 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return 0;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c == 0xF0) lo = 0x90;      /* no overlong forms */
        else if (c == 0xF4) hi = 0x8F; /* nothing above U+10FFFF */
        return (p[1] >= lo && p[1] <= hi) ? 4 : 0;
    }
    return 0;
}

static int hexval(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/*
 * The first byte of [p, e) that is not printable ASCII other than '"' and '\\' (a quote, a backslash,
 * a control byte or a byte >= 0x80), looked for in the first 16 bytes, then 64 bytes at a time while
 * at least 64 remain (AVX2, or four SSE2 loads), then 16 at a time; when none is found in those
 * blocks, the byte after them (less than 16 before e; the caller goes on byte by byte).
 */
#if defined(HAVE_AVX2_PATH)
__attribute__((target("avx2"))) static cp skip_plain_avx2(cp p, cp e) {
    const __m256i quote = _mm256_set1_epi8('"'), bslash = _mm256_set1_epi8('\\'), space = _mm256_set1_epi8(0x20);
    while (e - p >= 64) {
        __m256i a = _mm256_loadu_si256((const __m256i *)p), b = _mm256_loadu_si256((const __m256i *)(p + 32));
        /* signed compare: bytes below 0x20 and bytes >= 0x80 (negative) both count */
        __m256i sa = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(a, quote), _mm256_cmpeq_epi8(a, bslash)),
                                     _mm256_cmpgt_epi8(space, a));
        __m256i sb = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(b, quote), _mm256_cmpeq_epi8(b, bslash)),
                                     _mm256_cmpgt_epi8(space, b));
        uint64_t m = (uint64_t)(uint32_t)_mm256_movemask_epi8(sa) | ((uint64_t)(uint32_t)_mm256_movemask_epi8(sb) << 32);
        if (m) return p + __builtin_ctzll(m);
        p += 64;
    }
    return p;
}
#endif

#if defined(__SSE2__)
static inline uint64_t special16(cp p) {
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    /* signed compare: bytes below 0x20 and bytes >= 0x80 (negative) both count */
    return (unsigned)_mm_movemask_epi8(
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)), _mm_cmplt_epi8(v, space)));
}
#endif

static inline cp skip_plain(cp p, cp e) {
#if defined(__SSE2__)
    /* most strings are short (keys, ids, small values): one 16-byte look first */
    if (e - p < 16) return p;
    uint64_t m = special16(p);
    if (m) return p + __builtin_ctzll(m);
    p += 16;
#if defined(HAVE_AVX2_PATH)
    if (use_avx2) {
        if (e - p >= 64) {
            p = skip_plain_avx2(p, e);
            if (e - p >= 64) return p; /* stopped at a special byte */
        }
    } else
#endif
    {
        while (e - p >= 64) {
            m = special16(p) | special16(p + 16) << 16 | special16(p + 32) << 32 | special16(p + 48) << 48;
            if (m) return p + __builtin_ctzll(m);
            p += 64;
        }
    }
    while (e - p >= 16) {
        m = special16(p);
        if (m) return p + __builtin_ctzll(m);
        p += 16;
    }
#endif
    return p;
}

/*
 * A JSON string starting at the opening quote p. Returns the byte after the closing quote, or NULL
 * (defer). *canon is cleared when the string is not written the way serde_json / orjson write it
 * (escapes other than \" \\ \b \f \n \r \t and \u00XX for the other control characters, lowercase).
 * *escaped is set when the string holds any escape or non-ASCII byte.
 */
static cp scan_string(cp p, cp e, int *canon, int *escaped) {
    p++;
    for (;;) {
        p = skip_plain(p, e); /* long plain runs: whole blocks at a time */
        while (p < e && PLAIN[*p]) p++;
        if (p >= e) return NULL;
        unsigned char c = *p;
        if (c == '"') return p + 1;
        if (c == '\\') {
            *escaped = 1;
            if (e - p < 2) return NULL;
            switch (p[1]) {
            case '"': case '\\': case 'b': case 'f': case 'n': case 'r': case 't':
                p += 2;
                break;
            case '/':
                *canon = 0;
                p += 2;
                break;
            case 'u': {
                if (e - p < 6) return NULL;
                int v = 0;
                for (int i = 2; i < 6; i++) {
                    int h = hexval(p[i]);
                    if (h < 0) return NULL;
                    v = (v << 4) | h;
                }
                if (v >= 0xD800 && v <= 0xDFFF) {
                    /* surrogates: the reference path decides, except a high + low pair when the JSONL
                       column reader (the only one to set surrogate_pairs) asked for pairs */
                    if (!surrogate_pairs || v > 0xDBFF || e - p < 12 || p[6] != '\\' || p[7] != 'u') return NULL;
                    int w = 0;
                    for (int i = 8; i < 12; i++) {
                        int h = hexval(p[i]);
                        if (h < 0) return NULL;
                        w = (w << 4) | h;
                    }
                    if (w < 0xDC00 || w > 0xDFFF) return NULL;
                    *canon = 0;
                    p += 12;
                    break;
                }
                if (v >= 0x20 || v == 0x08 || v == 0x09 || v == 0x0A || v == 0x0C || v == 0x0D ||
                    p[4] != HEX[v >> 4] || p[5] != HEX[v & 15] || p[2] != '0' || p[3] != '0') {
                    *canon = 0;
                }
                p += 6;
                break;
            }
            default:
                return NULL;
            }
            continue;
        }
        if (c < 0x20) return NULL; /* raw control character: invalid JSON */
        *escaped = 1;
        do { /* a run of non-ASCII characters, each a strict UTF-8 sequence */
            int n = utf8_len(p, e);
            if (!n) return NULL;
            p += n;
        } while (p < e && *p >= 0x80);
    }
}

static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* A JSON number; NULL (defer) when invalid or when it might not fit a double (orjson then fails). */
static cp scan_number(cp p, cp e) {
    if (p < e && *p == '-') p++;
    if (p >= e) return NULL;
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        cp s = p;
        while (p < e && is_digit(*p)) p++;
        if (p - s > 18) return NULL;
    } else {
        return NULL;
    }
    if (p < e && *p == '.') {
        p++;
        cp s = p;
        while (p < e && is_digit(*p)) p++;
        if (p == s) return NULL;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-')) p++;
        cp s = p;
        while (p < e && is_digit(*p)) p++;
        if (p == s || p - s > 2) return NULL;
    }
    return p;
}

static cp scan_value(cp p, cp e, int depth, int *canon);

static cp scan_object(cp p, cp e, int depth, int *canon) {
    if (depth + 1 > MAX_DEPTH) return NULL;
    p++;
    if (p < e && *p == '}') return p + 1;
    for (;;) {
        if (p >= e || *p != '"') return NULL;
        int esc = 0;
        p = scan_string(p, e, canon, &esc);
        if (!p || p >= e || *p != ':') return NULL;
        p = scan_value(p + 1, e, depth + 1, canon);
        if (!p || p >= e) return NULL;
        if (*p == '}') return p + 1;
        if (*p != ',') return NULL;
        p++;
    }
}

static cp scan_array(cp p, cp e, int depth, int *canon) {
    if (depth + 1 > MAX_DEPTH) return NULL;
    p++;
    if (p < e && *p == ']') return p + 1;
    for (;;) {
        p = scan_value(p, e, depth + 1, canon);
        if (!p || p >= e) return NULL;
        if (*p == ']') return p + 1;
        if (*p != ',') return NULL;
        p++;
    }
}

static cp scan_value(cp p, cp e, int depth, int *canon) {
    if (p >= e) return NULL;
    switch (*p) {
    case '"': {
        int esc = 0;
        return scan_string(p, e, canon, &esc);
    }
    case '{':
        return scan_object(p, e, depth, canon);
    case '[':
        return scan_array(p, e, depth, canon);
    case 't':
        return (e - p >= 4 && memcmp(p, "true", 4) == 0) ? p + 4 : NULL;
    case 'f':
        return (e - p >= 5 && memcmp(p, "false", 5) == 0) ? p + 5 : NULL;
    case 'n':
        return (e - p >= 4 && memcmp(p, "null", 4) == 0) ? p + 4 : NULL;
    default:
        return scan_number(p, e);
    }
}


/* -- string-aware nesting check, 64 bytes at a time ------------------------------------------- */

typedef struct {
    uint64_t quote, bslash, open, close;
} Masks;

#if defined(HAVE_AVX2_PATH)
__attribute__((target("avx2"))) static inline void masks64_avx2(cp p, Masks *m) {
    __m256i lo = _mm256_loadu_si256((const __m256i *)p), hi = _mm256_loadu_si256((const __m256i *)(p + 32));
#define MASK2(expr_lo, expr_hi) \
    ((uint64_t)(uint32_t)_mm256_movemask_epi8(expr_lo) | ((uint64_t)(uint32_t)_mm256_movemask_epi8(expr_hi) << 32))
#define EQ(v, c) _mm256_cmpeq_epi8(v, _mm256_set1_epi8(c))
    m->quote = MASK2(EQ(lo, '"'), EQ(hi, '"'));
    m->bslash = MASK2(EQ(lo, '\\'), EQ(hi, '\\'));
    m->open = MASK2(_mm256_or_si256(EQ(lo, '{'), EQ(lo, '[')), _mm256_or_si256(EQ(hi, '{'), EQ(hi, '[')));
    m->close = MASK2(_mm256_or_si256(EQ(lo, '}'), EQ(lo, ']')), _mm256_or_si256(EQ(hi, '}'), EQ(hi, ']')));
#undef EQ
#undef MASK2
}
#endif

static inline void masks64_base(cp p, Masks *m) {
#if defined(__SSE2__)
    uint64_t q = 0, b = 0, o = 0, c = 0;
    for (int k = 0; k < 4; k++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + 16 * k));
        uint64_t sh = 16 * (uint64_t)k;
        q |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('"'))) << sh;
        b |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))) << sh;
        o |= (uint64_t)(unsigned)_mm_movemask_epi8(
                 _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('{')), _mm_cmpeq_epi8(v, _mm_set1_epi8('['))))
             << sh;
        c |= (uint64_t)(unsigned)_mm_movemask_epi8(
                 _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('}')), _mm_cmpeq_epi8(v, _mm_set1_epi8(']'))))
             << sh;
    }
    m->quote = q, m->bslash = b, m->open = o, m->close = c;
#else
    memset(m, 0, sizeof *m);
    for (int i = 0; i < 64; i++) {
        uint64_t bit = (uint64_t)1 << i;
        switch (p[i]) {
        case '"': m->quote |= bit; break;
        case '\\': m->bslash |= bit; break;
        case '{': case '[': m->open |= bit; break;
        case '}': case ']': m->close |= bit; break;
        default: break;
        }
    }
#endif
}

static uint64_t prefix_xor(uint64_t x) {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

/*
 * True when the JSON text [s, e), entered at nesting ``depth``, closes every bracket outside strings
 * (ending at depth 0), never nests deeper than MAX_DEPTH, and ends outside any string. Strings are
 * found from unescaped quotes (a backslash escapes the next byte); nothing else is validated. Used
 * for lines the hash chain attests.
 */
#define NESTING_BODY(MASKS) \
    unsigned char tail[64]; \
    uint64_t in_string = 0; /* all ones while a string continues across blocks */ \
    int carry_escape = 0;   /* the previous block ended in an unescaped backslash */ \
    for (cp p = s; p < e; p += 64) { \
        cp blk = p; \
        uint64_t valid = ~(uint64_t)0; \
        if (e - p < 64) { \
            memset(tail, ' ', sizeof tail); \
            memcpy(tail, p, e - p); \
            blk = tail; \
            valid = ((uint64_t)1 << (e - p)) - 1; \
        } \
        Masks m; \
        MASKS(blk, &m); \
        uint64_t escaped = 0, bs = m.bslash & valid; \
        if (carry_escape) { \
            escaped |= 1; \
            bs &= ~(uint64_t)1; \
            carry_escape = 0; \
        } \
        while (bs) { \
            int i = __builtin_ctzll(bs); \
            if (i == 63) { \
                carry_escape = 1; \
                break; \
            } \
            escaped |= (uint64_t)1 << (i + 1); \
            bs &= ~((uint64_t)3 << i); /* this backslash, and the next byte if it is one */ \
        } \
        uint64_t quotes = m.quote & ~escaped & valid; \
        uint64_t str = prefix_xor(quotes) ^ in_string; \
        in_string = (uint64_t)0 - (str >> 63); \
        uint64_t open = m.open & ~str & valid, close = m.close & ~str & valid; \
        int no = __builtin_popcountll(open), nc = __builtin_popcountll(close); \
        if (depth + no <= MAX_DEPTH && depth - nc >= 0) { \
            depth += no - nc; \
            continue; \
        } \
        uint64_t all = open | close; \
        while (all) { \
            int i = __builtin_ctzll(all); \
            uint64_t bit = (uint64_t)1 << i; \
            depth += (open & bit) ? 1 : -1; \
            if (depth < 0 || depth > MAX_DEPTH) return 0; \
            all &= all - 1; \
        } \
    } \
    return depth == 0 && !in_string && !carry_escape;

static int nesting_ok_base(cp s, cp e, int depth) {
    NESTING_BODY(masks64_base)
}

#if defined(HAVE_AVX2_PATH)
__attribute__((target("avx2,popcnt,bmi"))) static int nesting_ok_avx2(cp s, cp e, int depth) {
    NESTING_BODY(masks64_avx2)
}
#endif

static int nesting_ok(cp s, cp e, int depth) {
#if defined(HAVE_AVX2_PATH)
    if (use_avx2) return nesting_ok_avx2(s, e, depth);
#endif
    return nesting_ok_base(s, e, depth);
}

/* -- the envelope ------------------------------------------------------------------------------ */

static cp lit(cp p, cp e, const char *s, size_t n) {
    return ((size_t)(e - p) >= n && memcmp(p, s, n) == 0) ? p + n : NULL;
}

/* An envelope string: printable ASCII without quote or backslash. Sets [*s, *t) to its contents. */
static cp env_str(cp p, cp e, cp *s, cp *t) {
    if (p >= e || *p != '"') return NULL;
    p++;
    *s = p;
    while (p < e && PLAIN[*p] && *p < 0x7F) p++;
    if (p >= e || *p != '"') return NULL;
    *t = p;
    return p + 1;
}

/* vak's timestamp form: YYYY-MM-DDTHH:MM:SS[.f{1,9}]Z */
static int ts_ok(cp s, cp t) {
    static const char pat[] = "dddd-dd-ddTdd:dd:dd";
    if (t - s < 20) return 0;
    for (int i = 0; i < 19; i++) {
        if (pat[i] == 'd' ? !is_digit(s[i]) : s[i] != (unsigned char)pat[i]) return 0;
    }
    cp p = s + 19;
    if (*p == '.') {
        cp f = ++p;
        while (p < t && is_digit(*p)) p++;
        if (p == f || p - f > 9) return 0;
    }
    return p + 1 == t && *p == 'Z';
}

static PyObject *ascii_str(cp s, cp t) { return PyUnicode_DecodeASCII((const char *)s, t - s, NULL); }

/* Entry kinds repeat on every line: a small cache hands out one string object per kind. */
#define KIND_CACHE 32
static PyObject *kind_cache[KIND_CACHE];

static PyObject *kind_str(cp s, cp t) {
    Py_ssize_t n = t - s;
    for (int i = 0; i < KIND_CACHE && kind_cache[i]; i++) {
        if (PyUnicode_GET_LENGTH(kind_cache[i]) == n && memcmp(PyUnicode_DATA(kind_cache[i]), s, n) == 0)
            return Py_NewRef(kind_cache[i]);
    }
    PyObject *o = ascii_str(s, t);
    for (int i = 0; o && i < KIND_CACHE; i++) {
        if (!kind_cache[i]) {
            kind_cache[i] = Py_NewRef(o);
            break;
        }
    }
    return o;
}

static int is_envelope_key(cp s, size_t n) {
    switch (n) {
    case 2: return memcmp(s, "id", 2) == 0 || memcmp(s, "ts", 2) == 0;
    case 4: return memcmp(s, "kind", 4) == 0;
    case 7: return memcmp(s, "at_turn", 7) == 0;
    case 9: return memcmp(s, "parent_id", 9) == 0 || memcmp(s, "prev_hash", 9) == 0;
    default: return 0;
    }
}

typedef struct {
    cp id_s, id_t, par_s, par_t, ts_s, ts_t, prev_s, prev_t, at_s, at_t, kind_s, kind_t;
    cp kind_end;
} Envelope;

static int parse_envelope(cp p, cp e, Envelope *env) {
    memset(env, 0, sizeof *env);
    if (!(p = lit(p, e, "{\"id\":", 6)) || !(p = env_str(p, e, &env->id_s, &env->id_t))) return 0;
    if (!(p = lit(p, e, ",\"parent_id\":", 13))) return 0;
    cp q = lit(p, e, "null", 4);
    if (q) p = q;
    else if (!(p = env_str(p, e, &env->par_s, &env->par_t))) return 0;
    if (!(p = lit(p, e, ",\"ts\":", 6)) || !(p = env_str(p, e, &env->ts_s, &env->ts_t))) return 0;
    if (!ts_ok(env->ts_s, env->ts_t)) return 0;
    if ((q = lit(p, e, ",\"prev_hash\":", 13)) != NULL) {
        if (!(p = env_str(q, e, &env->prev_s, &env->prev_t))) return 0;
    }
    if ((q = lit(p, e, ",\"at_turn\":", 11)) != NULL) {
        if (!(p = env_str(q, e, &env->at_s, &env->at_t))) return 0;
    }
    if (!(p = lit(p, e, ",\"kind\":", 8)) || !(p = env_str(p, e, &env->kind_s, &env->kind_t))) return 0;
    env->kind_end = p;
    return 1;
}


typedef struct {
    cp ks, kt; /* key bytes (no escapes) */
    cp ms, me; /* the member: from the comma before the key to the end of the value */
    cp vs;     /* the value's first byte */
    int canon;
} Member;

#define MAX_MEMBERS 64

/* The payload members after the kind value; -1 to defer (not plain, or too many members). */
static int walk_members(cp p, cp e, Member *m) {
    int n = 0;
    for (;;) {
        if (p >= e) return -1;
        if (*p == '}') return p + 1 == e ? n : -1;
        if (*p != ',' || n == MAX_MEMBERS) return -1;
        cp mstart = p++;
        if (p >= e || *p != '"') return -1;
        int canon = 1, esc = 0;
        cp ks = p + 1;
        p = scan_string(p, e, &canon, &esc);
        if (!p || esc || p >= e || *p != ':') return -1;
        cp kt = p - 1;
        if (is_envelope_key(ks, kt - ks)) return -1;
        canon = 1;
        cp vs = p + 1;
        p = scan_value(vs, e, 1, &canon);
        if (!p) return -1;
        m[n].ks = ks, m[n].kt = kt, m[n].ms = mstart, m[n].me = p, m[n].vs = vs, m[n].canon = canon;
        n++;
    }
}

/*
 * Validate the payload members after the envelope's kind value (p) up to the closing brace (the
 * line's last byte, e - 1), appending (key, start, end, canonical) per member, relative to the line
 * start s, to ``members`` when it is not NULL. Returns 1 when plain, 0 to defer, -1 on a Python error.
 */
static int check_rest(cp s, cp p, cp e, PyObject *members) {
    Member m[MAX_MEMBERS];
    int n = walk_members(p, e, m);
    if (n < 0) return 0;
    for (int i = 0; members && i < n; i++) {
        PyObject *item = Py_BuildValue("(Nnni)", ascii_str(m[i].ks, m[i].kt), (Py_ssize_t)(m[i].ms - s),
                                       (Py_ssize_t)(m[i].me - s), m[i].canon);
        if (!item) return -1;
        int rc = PyList_Append(members, item);
        Py_DECREF(item);
        if (rc < 0) return -1;
    }
    return 1;
}

/* -- one line ---------------------------------------------------------------------------------- */

/*
 * Check the line [s, e) (no LF) and, when plain, build its record; returns NULL with no error set when
 * the line is deferred, NULL with an error set on a Python failure.
 */
static PyObject *plain_line(cp s, cp e, Py_ssize_t start, Py_ssize_t nl, int flags) {
    Envelope env;
    if (e - s < 2 || e[-1] != '}' || !parse_envelope(s, e, &env)) return NULL;
    PyObject *members = NULL;
    if (flags & F_MEMBERS) {
        members = PyList_New(0);
        if (!members) return NULL;
    }
    if (check_rest(s, env.kind_end, e, members) <= 0) {
        Py_XDECREF(members);
        return NULL; /* deferred, or a Python error is set */
    }
    PyObject *digest = hex_digest(s, e - s);
    PyObject *body = NULL;
    if (flags & F_BODY_DIGEST) {
        body = hex_digest(env.kind_end, e - env.kind_end);
    } else {
        body = Py_NewRef(Py_None);
    }
    PyObject *rec = PyTuple_New(12);
    if (!rec || !digest || !body) {
        Py_XDECREF(rec);
        Py_XDECREF(digest);
        Py_XDECREF(body);
        Py_XDECREF(members);
        return NULL;
    }
    PyTuple_SET_ITEM(rec, 0, PyLong_FromSsize_t(start));
    PyTuple_SET_ITEM(rec, 1, PyLong_FromSsize_t(nl));
    PyTuple_SET_ITEM(rec, 2, digest);
    PyTuple_SET_ITEM(rec, 3, ascii_str(env.id_s, env.id_t));
    PyTuple_SET_ITEM(rec, 4, env.par_s ? ascii_str(env.par_s, env.par_t) : Py_NewRef(Py_None));
    PyTuple_SET_ITEM(rec, 5, ascii_str(env.ts_s, env.ts_t));
    PyTuple_SET_ITEM(rec, 6, env.prev_s ? ascii_str(env.prev_s, env.prev_t) : Py_NewRef(Py_None));
    PyTuple_SET_ITEM(rec, 7, env.at_s ? ascii_str(env.at_s, env.at_t) : Py_NewRef(Py_None));
    PyTuple_SET_ITEM(rec, 8, kind_str(env.kind_s, env.kind_t));
    PyTuple_SET_ITEM(rec, 9, PyLong_FromSsize_t(env.kind_end - s));
    PyTuple_SET_ITEM(rec, 10, body);
    PyTuple_SET_ITEM(rec, 11, members ? members : Py_NewRef(Py_None));
    for (int i = 0; i < 12; i++) {
        if (!PyTuple_GET_ITEM(rec, i)) {
            Py_DECREF(rec);
            return NULL;
        }
    }
    return rec;
}

PyDoc_STRVAR(scan_lines_doc,
"scan_lines(buf, pos, end, max_lines, flags) -> (records, next_pos)\n\n"
"Frame and check the complete lines (ending in LF) of buf[pos:end], at most max_lines of them.\n"
"Each record is (start, nl) for a line the caller must read itself, or, for a plain line,\n"
"(start, nl, line_sha256, id, parent_id, ts, prev_hash, at_turn, kind, kind_end, body_sha256,\n"
"members) where the line is buf[start:nl], kind_end is relative to start, body_sha256 is the\n"
"SHA-256 of the bytes after the kind value (flag 1, else None) and members is a list of\n"
"(key, start, end, canonical) per payload member relative to start (flag 2, else None).\n"
"next_pos is the index after the last line returned; bytes after it hold no complete line\n"
"or were left for the next call.");

static PyObject *scan_lines(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, end, max_lines;
    int flags;
    if (!PyArg_ParseTuple(args, "y*nnni:scan_lines", &view, &pos, &end, &max_lines, &flags)) return NULL;
    if (pos < 0 || end > view.len || pos > end || max_lines < 1) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "scan_lines: bad range");
        return NULL;
    }
    cp buf = (cp)view.buf;
    PyObject *records = PyList_New(0);
    if (!records) {
        PyBuffer_Release(&view);
        return NULL;
    }
    Py_ssize_t n = 0;
    while (n < max_lines && pos < end) {
        cp lf = memchr(buf + pos, '\n', end - pos);
        if (!lf) break;
        Py_ssize_t nl = lf - buf;
        PyObject *rec = plain_line(buf + pos, lf, pos, nl, flags);
        if (!rec) {
            if (PyErr_Occurred()) goto fail;
            rec = Py_BuildValue("(nn)", pos, nl);
            if (!rec) goto fail;
        }
        if (PyList_Append(records, rec) < 0) {
            Py_DECREF(rec);
            goto fail;
        }
        Py_DECREF(rec);
        pos = nl + 1;
        n++;
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("(Nn)", records, pos);
fail:
    Py_DECREF(records);
    PyBuffer_Release(&view);
    return NULL;
}


/* -- verification runs -------------------------------------------------------------------------- */

#define V_BROKEN 1     /* prev_hash differs from the expected digest */
#define V_UNCHAINED 2  /* no prev_hash although a digest was expected */
#define V_TS_BACK 4    /* timestamp earlier than the previous entry's */
#define V_LONG 8       /* line longer than the caller's threshold */
#define V_PARENT 16    /* parent_id is not the previous line's id (or is its own id): caller checks */

/* 29-byte sort key of a validated vak timestamp: YYYY-MM-DDTHH:MM:SS.fffffffff */
static void ts_key(cp s, cp t, unsigned char key[29]) {
    memcpy(key, s, 19);
    key[19] = '.';
    cp f = s + 20;
    for (int i = 0; i < 9; i++) key[20 + i] = (s[19] == '.' && f + i < t - 1) ? f[i] : '0';
}

PyDoc_STRVAR(verify_run_doc,
"verify_run(buf, pos, end, max_lines, expected, ts_key, long_line) -> tuple\n\n"
"Check consecutive complete lines of buf[pos:end] while each is a plain entry: vak's envelope and\n"
"either (a) attested by the next line's prev_hash and nested at most 128 levels, or (b) strict JSON\n"
"in vak's compact form. Stops before the first other line (the caller reads it) or after max_lines.\n"
"expected is the digest the first line's prev_hash should carry (None: unchecked); ts_key the\n"
"previous entry's 29-byte timestamp key (None: none). Returns (next_pos, starts, ids, parents, kinds,\n"
"tss, digests, flagged, expected, ts_key) where flagged lists (index, bits, prev_hash) of the lines\n"
"with bits V_BROKEN=1, V_UNCHAINED=2, V_TS_BACK=4, V_LONG=8, V_PARENT=16.");

static PyObject *verify_run(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, end, max_lines, long_line;
    PyObject *expected_obj, *ts_obj;
    if (!PyArg_ParseTuple(args, "y*nnnOOn:verify_run", &view, &pos, &end, &max_lines, &expected_obj, &ts_obj,
                          &long_line))
        return NULL;
    PyObject *starts = NULL, *ids = NULL, *parents = NULL, *kinds = NULL, *tss = NULL, *digests = NULL,
             *flagged = NULL, *result = NULL;
    if (pos < 0 || end > view.len || pos > end || max_lines < 1) {
        PyErr_SetString(PyExc_ValueError, "verify_run: bad range");
        goto done;
    }
    char expected[64];
    int have_expected = 0;
    if (expected_obj != Py_None) {
        Py_ssize_t n;
        const char *x = PyUnicode_AsUTF8AndSize(expected_obj, &n);
        if (!x) goto done;
        if (n == 64) {
            memcpy(expected, x, 64);
            have_expected = 1;
        } else {
            have_expected = -1; /* an expectation no prev_hash of 64 hex digits can meet */
        }
    }
    unsigned char prev_key[29];
    int have_key = 0;
    if (ts_obj != Py_None) {
        char *x;
        Py_ssize_t n;
        if (PyBytes_AsStringAndSize(ts_obj, &x, &n) < 0) goto done;
        if (n != 29) {
            PyErr_SetString(PyExc_ValueError, "verify_run: ts_key must be 29 bytes");
            goto done;
        }
        memcpy(prev_key, x, 29);
        have_key = 1;
    }
    starts = PyList_New(0), ids = PyList_New(0), parents = PyList_New(0), kinds = PyList_New(0);
    tss = PyList_New(0), digests = PyList_New(0), flagged = PyList_New(0);
    if (!starts || !ids || !parents || !kinds || !tss || !digests || !flagged) goto done;

    cp buf = (cp)view.buf;
    cp bend = buf + end;
    Envelope cur, nxt;
    int have_cur = 0;
    cp prev_id_s = NULL, prev_id_t = NULL;
    cp next_lf = NULL; /* the LF of the line after the current one, once found */
    PyObject *prev_id_obj = NULL;
    Py_ssize_t n = 0;
    while (n < max_lines && buf + pos < bend) {
        cp s = buf + pos;
        cp lf = next_lf ? next_lf : memchr(s, '\n', bend - s);
        next_lf = NULL;
        if (!lf) break;
        if (!have_cur && (lf - s < 2 || lf[-1] != '}' || !parse_envelope(s, lf, &cur))) break;
        /* the next line's envelope, when complete: its prev_hash attests this line */
        int attested = 0;
        have_cur = 0;
        char hex[64];
        hex64(s, lf - s, hex);
        cp ns = lf + 1;
        cp nlf = ns < bend ? memchr(ns, '\n', bend - ns) : NULL;
        next_lf = nlf;
        if (nlf && nlf - ns >= 2 && nlf[-1] == '}' && parse_envelope(ns, nlf, &nxt)) {
            have_cur = 1; /* nxt becomes cur on the next iteration */
            attested = nxt.prev_s && nxt.prev_t - nxt.prev_s == 64 && memcmp(nxt.prev_s, hex, 64) == 0;
        }
        int ok = attested ? nesting_ok(cur.kind_end, lf, 1) && (cur.kind_end[0] == ',' || cur.kind_end[0] == '}')
                          : check_rest(s, cur.kind_end, lf, NULL);
        if (ok < 0) goto done;
        if (!ok) break;
        int bits = 0;
        if (have_expected) {
            if (!cur.prev_s) bits |= V_UNCHAINED;
            else if (have_expected < 0 || cur.prev_t - cur.prev_s != 64 || memcmp(cur.prev_s, expected, 64) != 0)
                bits |= V_BROKEN;
        }
        memcpy(expected, hex, 64);
        have_expected = 1;
        unsigned char key[29];
        ts_key(cur.ts_s, cur.ts_t, key);
        if (have_key && memcmp(key, prev_key, 29) < 0) bits |= V_TS_BACK;
        memcpy(prev_key, key, 29);
        have_key = 1;
        if (lf - s > long_line) bits |= V_LONG;
        if (cur.par_s) {
            size_t pl = cur.par_t - cur.par_s;
            if (!prev_id_s || (size_t)(prev_id_t - prev_id_s) != pl || memcmp(prev_id_s, cur.par_s, pl) != 0 ||
                ((size_t)(cur.id_t - cur.id_s) == pl && memcmp(cur.id_s, cur.par_s, pl) == 0))
                bits |= V_PARENT;
        }
        prev_id_s = cur.id_s, prev_id_t = cur.id_t;
        PyObject *o;
#define APPEND(list, expr)                                         \
    do {                                                           \
        o = (expr);                                                \
        if (!o || PyList_Append(list, o) < 0) {                    \
            Py_XDECREF(o);                                         \
            goto done;                                             \
        }                                                          \
        Py_DECREF(o);                                              \
    } while (0)
        APPEND(starts, PyLong_FromSsize_t(pos));
        PyObject *id_obj = ascii_str(cur.id_s, cur.id_t);
        if (!id_obj) goto done;
        if (!cur.par_s) o = Py_NewRef(Py_None);
        else if (!(bits & V_PARENT) && prev_id_obj) o = Py_NewRef(prev_id_obj); /* the previous line's id */
        else o = ascii_str(cur.par_s, cur.par_t);
        if (!o || PyList_Append(parents, o) < 0 || PyList_Append(ids, id_obj) < 0) {
            Py_XDECREF(o);
            Py_DECREF(id_obj);
            goto done;
        }
        Py_DECREF(o);
        prev_id_obj = id_obj; /* borrowed: the ids list holds it */
        Py_DECREF(id_obj);
        APPEND(kinds, kind_str(cur.kind_s, cur.kind_t));
        APPEND(tss, ascii_str(cur.ts_s, cur.ts_t));
        APPEND(digests, PyUnicode_FromStringAndSize(hex, 64));
        if (bits) {
            APPEND(flagged, Py_BuildValue("(niN)", n, bits,
                                          cur.prev_s ? ascii_str(cur.prev_s, cur.prev_t) : Py_NewRef(Py_None)));
        }
#undef APPEND
        if (have_cur) cur = nxt;
        pos = lf + 1 - buf;
        n++;
    }
    result = Py_BuildValue("(nOOOOOOON)", pos, starts, ids, parents, kinds, tss, digests, flagged,
                           have_expected > 0 ? PyUnicode_FromStringAndSize(expected, 64)
                                             : (have_expected < 0 ? Py_NewRef(expected_obj) : Py_NewRef(Py_None)));
    if (result) {
        PyObject *k = have_key ? PyBytes_FromStringAndSize((const char *)prev_key, 29) : Py_NewRef(Py_None);
        if (!k) {
            Py_CLEAR(result);
        } else {
            PyObject *full = PyTuple_New(10);
            if (!full) {
                Py_DECREF(k);
                Py_CLEAR(result);
            } else {
                for (int i = 0; i < 9; i++) {
                    PyObject *it = PyTuple_GET_ITEM(result, i);
                    Py_INCREF(it);
                    PyTuple_SET_ITEM(full, i, it);
                }
                PyTuple_SET_ITEM(full, 9, k);
                Py_DECREF(result);
                result = full;
            }
        }
    }
done:
    Py_XDECREF(starts);
    Py_XDECREF(ids);
    Py_XDECREF(parents);
    Py_XDECREF(kinds);
    Py_XDECREF(tss);
    Py_XDECREF(digests);
    Py_XDECREF(flagged);
    PyBuffer_Release(&view);
    return result;
}

/* -- entries column buffers ---------------------------------------------------------------------- */

typedef struct {
    char *p;
    size_t len, cap;
} JBuf;

static int jbuf_grow(JBuf *b, size_t extra) {
    if (b->len + extra <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra) cap *= 2;
    char *q = PyMem_Realloc(b->p, cap);
    if (!q) {
        PyErr_NoMemory();
        return -1;
    }
    b->p = q, b->cap = cap;
    return 0;
}

static size_t j_decode(cp s, cp e, char *out);

/* The 36 entries columns from offset_bytes to system_prompt_bytes (ts_at excluded), then chain_ok. */
enum { C_OFFSET, C_LINE, C_SIZE, C_KIND, C_ID, C_PARENT, C_TS, C_PREV, C_DIGEST, C_STATUS, C_TURN_NO, C_TURN_ID,
       C_ROLE, C_CONTROL, C_DIRECTIVE, C_MODEL, C_PROVIDER, C_STOP, C_IT, C_OT, C_CRT, C_CCT, C_TU, C_TRC, C_TRB,
       C_ACT_KIND, C_ACT_LABEL, C_PURPOSE, C_ATTEMPTS, C_PREFIX_DIGEST, C_PREFIX_TOKENS, C_EPOCH, C_APP_VERSION,
       C_BODY, C_SP_SHA, C_SP_BYTES, N_COLS, C_CHAIN_OK = N_COLS, C_TS_AT, N_ECOLS };

enum { T_INT, T_STR, T_BOOL };

static const unsigned char COL_TYPE[N_ECOLS] = {
    T_INT, T_INT, T_INT,                                      /* offset, line, size */
    T_STR, T_STR, T_STR, T_STR, T_STR, T_STR, T_STR,          /* kind, id, parent, ts, prev, digest, status */
    T_INT, T_STR, T_STR, T_STR, T_BOOL,                       /* turn_no, turn_id, role, control, directive */
    T_STR, T_STR, T_STR,                                      /* model, provider, stop_reason */
    T_INT, T_INT, T_INT, T_INT, T_INT, T_INT, T_INT,          /* four token counts, tool counts and bytes */
    T_STR, T_STR, T_STR, T_INT, T_STR, T_INT, T_INT, T_STR,   /* activity .. app_version */
    T_STR, T_STR, T_INT,                                      /* body_sha256, system prompt sha256, bytes */
    T_BOOL,                                                   /* chain_ok */
    T_INT,                                                    /* ts_at, microseconds since the epoch */
};

/* One value of a row before it is written: null, an int64 or bool, bytes, or a JSON string to decode. */
enum { E_NULL = 0, E_INT, E_RAW, E_JSON };

typedef struct {
    int t;
    long long i;
    const char *s; /* E_RAW: the UTF-8 bytes; E_JSON: the string value, quotes included (validated) */
    Py_ssize_t n;
} EVal;

typedef struct {
    JBuf valid; /* validity bitmap, (rows + 7) / 8 bytes */
    JBuf data;  /* int64 values, bool bitmap, or the UTF-8 bytes of a string column */
    JBuf offs;  /* string columns: rows + 1 int32 offsets */
} ECol;

/*
 * EntryCols: the rows of the entries table, column by column, as Arrow buffers (validity bitmaps,
 * int64 values, bool bitmaps, int32 offsets and UTF-8 data). scan_entries writes the rows of plain
 * lines into it and append_row those of the reference reader, in file order.
 */
typedef struct {
    PyObject_HEAD
    Py_ssize_t n;
    int ts_other; /* a row's ts is not a plain vak timestamp: ts_at is left to the caller */
    ECol c[N_ECOLS];
} EntryCols;

/*
 * ts_at of a timestamp in vak's form (YYYY-MM-DDTHH:MM:SS[.f{1,9}]Z, seconds written 00-59) that
 * names a real instant from year 1 on: microseconds since the epoch, digits past microseconds cut, as
 * Arrow's string-to-timestamp cast gives it. 0 for any other string: the caller then converts the
 * batch's ts itself.
 */
static int ts_micros(const char *s, Py_ssize_t n, long long *out) {
    static const char pat[] = "dddd-dd-ddTdd:dd:dd";
    if (n < 20) return 0;
    for (int i = 0; i < 19; i++) {
        if (pat[i] == 'd' ? !is_digit((unsigned char)s[i]) : s[i] != pat[i]) return 0;
    }
    long long us = 0;
    if (s[19] == '.') {
        Py_ssize_t k = 20;
        while (k < n && is_digit((unsigned char)s[k])) k++;
        Py_ssize_t digits = k - 20;
        if (digits < 1 || digits > 9 || k + 1 != n || s[k] != 'Z') return 0;
        for (int i = 0; i < 6; i++) us = us * 10 + (i < digits ? s[20 + i] - '0' : 0);
    } else if (n != 20 || s[19] != 'Z') {
        return 0;
    }
#define D2(i) ((s[i] - '0') * 10 + (s[(i) + 1] - '0'))
    long long y = D2(0) * 100 + D2(2), mo = D2(5), d = D2(8), h = D2(11), mi = D2(14), se = D2(17);
#undef D2
    static const int DIM[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (y < 1 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || se > 59) return 0;
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d > DIM[mo - 1] + (mo == 2 && leap)) return 0;
    /* days from 1970-01-01 (H. Hinnant's days_from_civil; y >= 1 here) */
    long long yy = y - (mo <= 2);
    long long era = yy / 400, yoe = yy - era * 400;
    long long doy = (153 * (mo > 2 ? mo - 3 : mo + 9) + 2) / 5 + d - 1;
    long long days = era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
    *out = ((days * 86400 + h * 3600 + mi * 60 + se) * 1000000) + us;
    return 1;
}

/* ts_at of a row from its ts value (set before the row is written). */
static void ec_ts_at(EntryCols *ec, EVal *v) {
    v[C_TS_AT].t = E_NULL;
    if (v[C_TS].t == E_NULL) return;
    long long us;
    if (v[C_TS].t == E_RAW && ts_micros(v[C_TS].s, v[C_TS].n, &us)) v[C_TS_AT].t = E_INT, v[C_TS_AT].i = us;
    else ec->ts_other = 1;
}

static void ec_reset(EntryCols *ec) {
    ec->n = 0;
    ec->ts_other = 0;
    for (int j = 0; j < N_ECOLS; j++) {
        ECol *c = &ec->c[j];
        c->valid.len = c->data.len = 0;
        if (COL_TYPE[j] == T_STR) {
            memset(c->offs.p, 0, 4);
            c->offs.len = 4;
        }
    }
}

static int ec_init_bufs(EntryCols *ec) {
    for (int j = 0; j < N_ECOLS; j++)
        if (COL_TYPE[j] == T_STR && jbuf_grow(&ec->c[j].offs, 4) < 0) return -1;
    ec_reset(ec);
    return 0;
}

/* Room for one more row in every column (a row is then written without any failure). */
static int ec_reserve(EntryCols *ec, const EVal *v) {
    for (int j = 0; j < N_ECOLS; j++) {
        ECol *c = &ec->c[j];
        if (jbuf_grow(&c->valid, 1) < 0) return -1;
        switch (COL_TYPE[j]) {
        case T_INT:
            if (jbuf_grow(&c->data, 8) < 0) return -1;
            break;
        case T_BOOL:
            if (jbuf_grow(&c->data, 1) < 0) return -1;
            break;
        default:
            if (jbuf_grow(&c->offs, 4) < 0 || (v[j].t != E_NULL && jbuf_grow(&c->data, v[j].n) < 0)) return -1;
            if (c->data.len + (v[j].t != E_NULL ? (size_t)v[j].n : 0) > INT32_MAX) {
                PyErr_SetString(PyExc_OverflowError, "entries: a string column outgrew int32 offsets");
                return -1;
            }
        }
    }
    return 0;
}

/* Append one row (every column's room reserved by ec_reserve). */
static void ec_write(EntryCols *ec, const EVal *v) {
    Py_ssize_t row = ec->n;
    unsigned char bit = (unsigned char)(1u << (row & 7));
    int new_byte = (row & 7) == 0;
    for (int j = 0; j < N_ECOLS; j++) {
        ECol *c = &ec->c[j];
        const EVal *x = &v[j];
        if (new_byte) c->valid.p[c->valid.len++] = 0;
        if (x->t != E_NULL) c->valid.p[c->valid.len - 1] |= bit;
        switch (COL_TYPE[j]) {
        case T_INT: {
            int64_t i = x->t == E_INT ? (int64_t)x->i : 0;
            memcpy(c->data.p + c->data.len, &i, 8);
            c->data.len += 8;
            break;
        }
        case T_BOOL:
            if (new_byte) c->data.p[c->data.len++] = 0;
            if (x->t == E_INT && x->i) c->data.p[c->data.len - 1] |= bit;
            break;
        default: {
            if (x->t == E_RAW) {
                memcpy(c->data.p + c->data.len, x->s, x->n);
                c->data.len += x->n;
            } else if (x->t == E_JSON) {
                cp s = (cp)x->s, e = s + x->n;
                if (memchr(s + 1, '\\', x->n - 2)) {
                    c->data.len += j_decode(s, e, c->data.p + c->data.len);
                } else {
                    memcpy(c->data.p + c->data.len, s + 1, x->n - 2);
                    c->data.len += x->n - 2;
                }
            }
            int32_t at = (int32_t)c->data.len;
            memcpy(c->offs.p + c->offs.len, &at, 4);
            c->offs.len += 4;
        }
        }
    }
    ec->n++;
}

static int ec_append(EntryCols *ec, const EVal *v) {
    if (ec_reserve(ec, v) < 0) return -1;
    ec_write(ec, v);
    return 0;
}

static void ec_dealloc(EntryCols *ec) {
    for (int j = 0; j < N_ECOLS; j++) {
        PyMem_Free(ec->c[j].valid.p);
        PyMem_Free(ec->c[j].data.p);
        PyMem_Free(ec->c[j].offs.p);
    }
    Py_TYPE(ec)->tp_free((PyObject *)ec);
}

static PyObject *ec_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    if ((args && PyTuple_GET_SIZE(args)) || (kwds && PyDict_GET_SIZE(kwds))) {
        PyErr_SetString(PyExc_TypeError, "EntryCols() takes no arguments");
        return NULL;
    }
    EntryCols *ec = (EntryCols *)type->tp_alloc(type, 0);
    if (!ec) return NULL;
    if (ec_init_bufs(ec) < 0) {
        Py_DECREF(ec);
        return NULL;
    }
    return (PyObject *)ec;
}

static Py_ssize_t ec_len(EntryCols *ec) { return ec->n; }

static const char STATUS_OK[] = "chain_ok", STATUS_BROKEN[] = "broken", STATUS_UNCHAINED[] = "unchained",
                  STATUS_UNCHECKED[] = "unchecked";

PyDoc_STRVAR(ec_append_row_doc,
"append_row(row) -> None\n\n"
"Append one row given as a tuple of the 36 column values (offset_bytes .. system_prompt_bytes, ts_at\n"
"excluded; None for null); chain_ok follows from chain_status.");

static PyObject *ec_append_row(EntryCols *ec, PyObject *row) {
    if (!PyTuple_Check(row) || PyTuple_GET_SIZE(row) != N_COLS) {
        PyErr_SetString(PyExc_ValueError, "append_row: a tuple of 36 values");
        return NULL;
    }
    EVal v[N_ECOLS];
    memset(v, 0, sizeof v);
    for (int j = 0; j < N_COLS; j++) {
        PyObject *o = PyTuple_GET_ITEM(row, j);
        if (o == Py_None) continue;
        switch (COL_TYPE[j]) {
        case T_INT: {
            if (!PyLong_Check(o) || PyBool_Check(o)) {
                PyErr_Format(PyExc_TypeError, "append_row: column %d expects an int", j);
                return NULL;
            }
            long long i = PyLong_AsLongLong(o);
            if (i == -1 && PyErr_Occurred()) return NULL;
            v[j].t = E_INT, v[j].i = i;
            break;
        }
        case T_BOOL:
            if (!PyBool_Check(o)) {
                PyErr_Format(PyExc_TypeError, "append_row: column %d expects a bool", j);
                return NULL;
            }
            v[j].t = E_INT, v[j].i = o == Py_True;
            break;
        default: {
            if (!PyUnicode_Check(o)) {
                PyErr_Format(PyExc_TypeError, "append_row: column %d expects a str", j);
                return NULL;
            }
            Py_ssize_t n;
            const char *s = PyUnicode_AsUTF8AndSize(o, &n);
            if (!s) return NULL;
            v[j].t = E_RAW, v[j].s = s, v[j].n = n;
        }
        }
    }
    if (v[C_STATUS].t == E_RAW) {
        const EVal *st = &v[C_STATUS];
        if (st->n == 8 && memcmp(st->s, STATUS_OK, 8) == 0) v[C_CHAIN_OK].t = E_INT, v[C_CHAIN_OK].i = 1;
        else if (st->n == 6 && memcmp(st->s, STATUS_BROKEN, 6) == 0) v[C_CHAIN_OK].t = E_INT, v[C_CHAIN_OK].i = 0;
    }
    ec_ts_at(ec, v);
    if (ec_append(ec, v) < 0) return NULL;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(ec_take_doc,
"take() -> (rows, columns, ts_other)\n\n"
"The rows so far as Arrow buffers, then empty: per column (the 36 of append_row, then chain_ok and\n"
"ts_at) a tuple (null_count, validity bitmap or None, values or offsets, string data or None), the\n"
"buffers in Arrow's order: int64 values, a bool bitmap, or a string column's rows + 1 int32 offsets\n"
"and its UTF-8 data. ts_at holds the\n"
"microseconds of every ts in vak's form naming a real instant; ts_other is True when some row's ts\n"
"is not (ts_at is then the caller's to compute from ts).");

/* one column for Python, its buffers in Arrow's order: (null_count, validity or None when no value is
 * null, values or offsets, data or None); n2 < 0: no third buffer */
static PyObject *column_out(Py_ssize_t nulls, const char *valid, Py_ssize_t nv, const char *b1, Py_ssize_t n1,
                            const char *b2, Py_ssize_t n2) {
    PyObject *v = nulls ? PyBytes_FromStringAndSize(valid, nv) : Py_NewRef(Py_None);
    PyObject *x = PyBytes_FromStringAndSize(b1, n1);
    PyObject *y = n2 >= 0 ? PyBytes_FromStringAndSize(b2, n2) : Py_NewRef(Py_None);
    if (!v || !x || !y) {
        Py_XDECREF(v);
        Py_XDECREF(x);
        Py_XDECREF(y);
        return NULL;
    }
    return Py_BuildValue("(nNNN)", nulls, v, x, y);
}

static PyObject *ec_take(EntryCols *ec, PyObject *unused) {
    Py_ssize_t n = ec->n;
    PyObject *outs = PyList_New(N_ECOLS);
    if (!outs) return NULL;
    for (int j = 0; j < N_ECOLS; j++) {
        ECol *c = &ec->c[j];
        Py_ssize_t nvalid = 0;
        for (size_t i = 0; i < c->valid.len; i++) nvalid += __builtin_popcount((unsigned char)c->valid.p[i]);
        Py_ssize_t nulls = n - nvalid;
        PyObject *o = COL_TYPE[j] == T_STR
                          ? column_out(nulls, c->valid.p, c->valid.len, c->offs.p, c->offs.len, c->data.p, c->data.len)
                          : column_out(nulls, c->valid.p, c->valid.len, c->data.p, c->data.len, NULL, -1);
        if (!o) {
            Py_DECREF(outs);
            return NULL;
        }
        PyList_SET_ITEM(outs, j, o);
    }
    int ts_other = ec->ts_other;
    ec_reset(ec);
    return Py_BuildValue("(nNO)", n, outs, ts_other ? Py_True : Py_False);
}

PyDoc_STRVAR(ec_truncate_doc, "truncate(rows) -> None: keep only the first rows rows.");

static PyObject *ec_truncate(EntryCols *ec, PyObject *arg) {
    Py_ssize_t m = PyLong_AsSsize_t(arg);
    if (m == -1 && PyErr_Occurred()) return NULL;
    if (m < 0) {
        PyErr_SetString(PyExc_ValueError, "truncate: rows must be >= 0");
        return NULL;
    }
    if (m >= ec->n) Py_RETURN_NONE;
    size_t bytes = (size_t)(m + 7) / 8;
    unsigned char keep = (unsigned char)((m & 7) ? (1u << (m & 7)) - 1 : 0xFF);
    for (int j = 0; j < N_ECOLS; j++) {
        ECol *c = &ec->c[j];
        c->valid.len = bytes;
        if (bytes) c->valid.p[bytes - 1] &= keep;
        switch (COL_TYPE[j]) {
        case T_INT:
            c->data.len = 8 * (size_t)m;
            break;
        case T_BOOL:
            c->data.len = bytes;
            if (bytes) c->data.p[bytes - 1] &= keep;
            break;
        default: {
            int32_t at;
            memcpy(&at, c->offs.p + 4 * m, 4);
            c->data.len = at;
            c->offs.len = 4 * ((size_t)m + 1);
        }
        }
    }
    ec->n = m;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(ec_last_offset_doc, "last_offset() -> int: offset_bytes of the last row.");

static PyObject *ec_last_offset(EntryCols *ec, PyObject *unused) {
    if (!ec->n) {
        PyErr_SetString(PyExc_IndexError, "last_offset: no rows");
        return NULL;
    }
    int64_t i;
    memcpy(&i, ec->c[C_OFFSET].data.p + 8 * (ec->n - 1), 8);
    return PyLong_FromLongLong(i);
}

static PyMethodDef ec_methods[] = {
    {"append_row", (PyCFunction)ec_append_row, METH_O, ec_append_row_doc},
    {"take", (PyCFunction)ec_take, METH_NOARGS, ec_take_doc},
    {"truncate", (PyCFunction)ec_truncate, METH_O, ec_truncate_doc},
    {"last_offset", (PyCFunction)ec_last_offset, METH_NOARGS, ec_last_offset_doc},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods ec_as_sequence = {.sq_length = (lenfunc)ec_len};

static PyTypeObject EntryColsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "vakaudit._native._linescan.EntryCols",
    .tp_basicsize = sizeof(EntryCols),
    .tp_dealloc = (destructor)ec_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = PyDoc_STR("EntryCols(): entries rows as Arrow column buffers (see scan_entries, append_row, take)"),
    .tp_methods = ec_methods,
    .tp_as_sequence = &ec_as_sequence,
    .tp_new = ec_new,
};

/* -- entries rows, column by column ------------------------------------------------------------ */

static int key_is(cp ks, cp kt, const char *key) {
    size_t n = strlen(key);
    return (size_t)(kt - ks) == n && memcmp(ks, key, n) == 0;
}

/* The last top-level member named key (a decoded dict keeps the last of duplicates), or NULL. */
static const Member *member(const Member *m, int n, const char *key) {
    const Member *hit = NULL;
    for (int i = 0; i < n; i++)
        if (key_is(m[i].ks, m[i].kt, key)) hit = &m[i];
    return hit;
}

typedef struct {
    cp s, e; /* the value's bytes */
} Span;

/*
 * The value of the last member named key inside the object [o, oe) (o at '{'); returns 1 and sets
 * *out, 0 when absent, -1 to defer (a key written with escapes could decode to ``key``).
 */
static int find_in(cp o, cp oe, const char *key, Span *out) {
    int found = 0;
    cp p = o + 1;
    if (p < oe && *p == '}') return 0;
    for (;;) {
        int canon = 1, esc = 0;
        cp ks = p + 1;
        p = scan_string(p, oe, &canon, &esc);
        if (!p) return -1;
        if (esc) return -1;
        cp kt = p - 1;
        cp vs = p + 1;
        p = scan_value(vs, oe, 1, &canon);
        if (!p) return -1;
        if (key_is(ks, kt, key)) {
            out->s = vs, out->e = p;
            found = 1;
        }
        if (*p == '}') return found;
        p++; /* ',' */
    }
}

/*
 * Skipping over values of a line already validated by walk_members (strict JSON): a string ends at
 * the first quote that is not escaped, a container at its matching bracket outside strings. Nothing
 * is checked again, so a second look at a member costs a search for quotes and backslashes.
 */
#if defined(HAVE_AVX2_PATH)
__attribute__((target("avx2"))) static cp next_qb_avx2(cp p, cp e) {
    const __m256i quote = _mm256_set1_epi8('"'), bslash = _mm256_set1_epi8('\\');
    while (e - p >= 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)p);
        unsigned m = (unsigned)_mm256_movemask_epi8(_mm256_or_si256(_mm256_cmpeq_epi8(v, quote),
                                                                    _mm256_cmpeq_epi8(v, bslash)));
        if (m) return p + __builtin_ctz(m);
        p += 32;
    }
    return p;
}
#endif

/* The first quote or backslash of [p, e), or e. */
static inline cp next_qb(cp p, cp e) {
#if defined(__SSE2__)
    if (e - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        unsigned m = (unsigned)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
        if (m) return p + __builtin_ctz(m);
        p += 16;
#if defined(HAVE_AVX2_PATH)
        if (use_avx2) p = next_qb_avx2(p, e);
#endif
        while (e - p >= 16) {
            v = _mm_loadu_si128((const __m128i *)p);
            m = (unsigned)_mm_movemask_epi8(
                _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
            if (m) return p + __builtin_ctz(m);
            p += 16;
        }
    }
#endif
    while (p < e && *p != '"' && *p != '\\') p++;
    return p;
}

/* A validated string starting at its opening quote p: the byte after its closing quote. */
static cp skip_string(cp p, cp e) {
    p++;
    for (;;) {
        p = next_qb(p, e);
        if (p >= e) return e;
        if (*p == '"') return p + 1;
        p += 2; /* an escape: the escaped byte is never the closing quote */
    }
}

/* A validated value starting at p: the byte after it. */
static cp skip_value(cp p, cp e) {
    if (*p == '"') return skip_string(p, e);
    if (*p == '{' || *p == '[') {
        int depth = 0;
        while (p < e) {
            unsigned char c = *p;
            if (c == '"') {
                p = skip_string(p, e);
                continue;
            }
            if (c == '{' || c == '[') depth++;
            else if ((c == '}' || c == ']') && --depth == 0) return p + 1;
            p++;
        }
        return e;
    }
    while (p < e && *p != ',' && *p != '}' && *p != ']') p++; /* a number or literal */
    return p;
}

/*
 * One pass over the members of the validated object [o, oe) (o at '{'): for each of the n keys, the
 * value of the last member of that name (found[i] = 1), as find_in gives for each key. Returns the
 * byte after the object, or NULL to defer, as find_in does (a key written with an escape or a
 * non-ASCII byte could decode to one of them).
 */
static cp find_keys(cp o, cp oe, const char *const *keys, int n, Span *out, int *found) {
    for (int i = 0; i < n; i++) found[i] = 0;
    cp p = o + 1;
    if (*p == '}') return p + 1;
    for (;;) {
        cp ks = p + 1;
        cp kt = skip_string(p, oe) - 1;
        for (cp x = ks; x < kt; x++)
            if (*x == '\\' || *x >= 0x80) return NULL;
        cp vs = kt + 2;
        p = skip_value(vs, oe);
        for (int i = 0; i < n; i++) {
            if (key_is(ks, kt, keys[i])) {
                out[i].s = vs, out[i].e = p;
                found[i] = 1;
            }
        }
        if (p >= oe) return NULL; /* not reached on a validated object */
        if (*p == '}') return p + 1;
        p++; /* ',' */
    }
}

/* UTF-8 byte length of a validated JSON string value (s at its opening quote), escapes decoded (a
   surrogate pair, which only the JSONL reader accepts, is one 4-byte character): the bytes between
   escapes are counted a run at a time. */
static Py_ssize_t decoded_len(cp s, cp e) {
    Py_ssize_t n = 0;
    cp p = s + 1, b = e - 1;
    for (;;) {
        cp q = memchr(p, '\\', b - p);
        if (!q) return n + (b - p);
        n += q - p;
        if (q[1] != 'u') {
            n++;
            p = q + 2;
            continue;
        }
        int v = (hexval(q[2]) << 12) | (hexval(q[3]) << 8) | (hexval(q[4]) << 4) | hexval(q[5]);
        if (v >= 0xD800 && v <= 0xDBFF) { /* a validated pair: one 4-byte character */
            n += 4;
            p = q + 12;
        } else {
            n += v < 0x80 ? 1 : v < 0x800 ? 2 : 3;
            p = q + 6;
        }
    }
}

/* -- entries rows, read from a plain line ---------------------------------------------------------- */

/* A JSON string value as a column value (null when the value is not a string). */
static void jstr(cp s, cp e, EVal *out) {
    if (s < e && *s == '"') out->t = E_JSON, out->s = (const char *)s, out->n = e - s;
}

/* A plain integer literal (at most 18 digits here, so always within int64) as a column value. */
static void jint(cp s, cp e, EVal *out) {
    if (s >= e) return;
    cp p = s + (*s == '-');
    if (p >= e || e - p > 18) return;
    long long v = 0;
    for (cp q = p; q < e; q++) {
        if (!is_digit(*q)) return;
        v = v * 10 + (*q - '0');
    }
    out->t = E_INT, out->i = *s == '-' ? -v : v;
}

/* Whether a JSON string column value decodes to the ASCII text lit (escapes decoded). */
static int jstr_is(const EVal *v, const char *lit) {
    if (v->t != E_JSON) return 0;
    size_t n = strlen(lit);
    cp s = (cp)v->s;
    if (!memchr(s + 1, '\\', v->n - 2)) return (size_t)v->n - 2 == n && memcmp(s + 1, lit, n) == 0;
    char tmp[64];
    if ((size_t)v->n > sizeof tmp) return 0; /* at most 6 bytes per decoded one: decodes to over 10 bytes */
    size_t k = j_decode(s, s + v->n, tmp);
    return k == n && memcmp(tmp, lit, n) == 0;
}

static void hex_of(const unsigned char md[32], char hex[64]) {
    for (int i = 0; i < SHA256_DIGEST_LENGTH; i++) {
        hex[2 * i] = HEX[md[i] >> 4];
        hex[2 * i + 1] = HEX[md[i] & 15];
    }
}



static PyObject *envelope_field;

/* += on the [count, bytes] list of fields[(kind, name)] */
static int account(PyObject *fields, PyObject *kind, PyObject *name, long long count, long long size) {
    PyObject *key = PyTuple_Pack(2, kind, name);
    if (!key) return -1;
    PyObject *acc = PyDict_GetItemWithError(fields, key);
    int rc = -1;
    if (!acc) {
        if (PyErr_Occurred()) goto out;
        acc = Py_BuildValue("[LL]", count, size);
        if (!acc) goto out;
        rc = PyDict_SetItem(fields, key, acc);
        Py_DECREF(acc);
        goto out;
    }
    for (int i = 0; i < 2; i++) {
        PyObject *old = PyList_GET_ITEM(acc, i);
        PyObject *add = PyLong_FromLongLong(i == 0 ? count : size);
        if (!add) goto out;
        PyObject *sum = PyNumber_Add(old, add);
        Py_DECREF(add);
        if (!sum) goto out;
        PyList_SetItem(acc, i, sum); /* steals sum, releases old */
    }
    rc = 0;
out:
    Py_DECREF(key);
    return rc;
}

/* entry_fields sums of one call, keyed by (kind object, member key bytes); flushed into the dict */
typedef struct {
    PyObject *kind; /* a strong reference; kinds come from the kind cache, one object per kind */
    cp key;         /* NULL: the envelope pseudo-field */
    Py_ssize_t klen;
    long long count, bytes;
} Acc;

#define ACC_SLOTS 512

static uint64_t acc_hash(PyObject *kind, cp key, Py_ssize_t klen) {
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)(uintptr_t)kind;
    for (Py_ssize_t i = 0; i < klen; i++) h = (h ^ key[i]) * 1099511628211ULL;
    return h ^ (h >> 29);
}

static int acc_flush(Acc *t, PyObject *fields) {
    for (int i = 0; i < ACC_SLOTS; i++) {
        if (!t[i].kind) continue;
        PyObject *name = t[i].key ? ascii_str(t[i].key, t[i].key + t[i].klen) : Py_NewRef(envelope_field);
        if (!name) return -1;
        int rc = account(fields, t[i].kind, name, t[i].count, t[i].bytes);
        Py_DECREF(name);
        Py_CLEAR(t[i].kind);
        if (rc < 0) return -1;
    }
    return 0;
}

static int acc_add(Acc *t, int *used, PyObject *fields, PyObject *kind, cp key, Py_ssize_t klen, Py_ssize_t size) {
    if (*used >= ACC_SLOTS / 2) { /* keep probing short: hand the sums over and start again */
        if (acc_flush(t, fields) < 0) return -1;
        *used = 0;
    }
    uint64_t h = acc_hash(kind, key, klen);
    for (int i = 0;; i++) {
        Acc *a = &t[(h + i) & (ACC_SLOTS - 1)];
        if (!a->kind) {
            a->kind = Py_NewRef(kind), a->key = key, a->klen = klen, a->count = 1, a->bytes = size;
            (*used)++;
            return 0;
        }
        if (a->kind == kind && a->klen == klen && (klen == 0 || (a->key && key && memcmp(a->key, key, klen) == 0)) &&
            (a->key == NULL) == (key == NULL)) {
            a->count++, a->bytes += size;
            return 0;
        }
    }
}

PyDoc_STRVAR(scan_entries_doc,
"scan_entries(buf, pos, end, max_lines, base, line_no, cols, fields, state, known, prep) -> next_pos\n\n"
"Write the ``entries`` row of each consecutive plain line of buf[pos:end] into the EntryCols cols\n"
"and add its members to the entry_fields accumulator ``fields`` ({(kind, field): [count, bytes]}).\n"
"Stops before the first line the caller must read (not plain, a kind outside ``known`` or 'work',\n"
"or a value whose column needs the reference decoder) or after max_lines. base is buf[0]'s file\n"
"offset and line_no the last line number consumed; state = [expected_digest, turn_no, turn_id,\n"
"in_prep] is updated in place; prep is the set of prep kinds (vakaudit.ledger.vocab.PREP_KINDS:\n"
"the turn numbering is vocab.turn_step's). A line's chain status is its row's status column; which finding a\n"
"broken or unchained line is, is decided by vakaudit.ledger.verdict alone.");

static PyObject *scan_entries(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, end, max_lines, base, line_no;
    PyObject *fields, *state, *known, *prep;
    EntryCols *ec;
    if (!PyArg_ParseTuple(args, "y*nnnnnO!O!O!OO:scan_entries", &view, &pos, &end, &max_lines, &base, &line_no,
                          &EntryColsType, &ec, &PyDict_Type, &fields, &PyList_Type, &state, &known, &prep))
        return NULL;
    PyObject *result = NULL, *turn_id = NULL;
    char *exp = NULL; /* the chain expectation's UTF-8 bytes (have_exp) */
    Py_ssize_t exp_len = 0;
    int have_exp = 0, exp_changed = 0;
    Acc acc[ACC_SLOTS];
    int acc_used = 0;
    memset(acc, 0, sizeof acc);
    if (pos < 0 || end > view.len || pos > end || PyList_GET_SIZE(state) != 4) {
        PyErr_SetString(PyExc_ValueError, "scan_entries: bad arguments");
        goto fail;
    }
    {
        PyObject *x = PyList_GET_ITEM(state, 0);
        const char *u = NULL;
        if (x != Py_None && !(u = PyUnicode_AsUTF8AndSize(x, &exp_len))) goto fail;
        exp = PyMem_Malloc(exp_len > 64 ? exp_len : 64);
        if (!exp) {
            PyErr_NoMemory();
            goto fail;
        }
        if (u) {
            memcpy(exp, u, exp_len);
            have_exp = 1;
        }
    }
    Py_ssize_t turn_no = PyLong_AsSsize_t(PyList_GET_ITEM(state, 1));
    turn_id = Py_NewRef(PyList_GET_ITEM(state, 2));
    int in_prep = PyObject_IsTrue(PyList_GET_ITEM(state, 3));
    if ((turn_no == -1 && PyErr_Occurred()) || in_prep < 0) goto fail;

    cp buf = (cp)view.buf;
    cp bend = buf + end;
    Member mem[MAX_MEMBERS];
    EVal v[N_ECOLS];
    Py_ssize_t n = 0;
    while (n < max_lines && buf + pos < bend) {
        cp s = buf + pos;
        cp lf = memchr(s, '\n', bend - s);
        if (!lf) break;
        cp e = lf;
        Envelope env;
        if (e - s < 2 || e[-1] != '}' || !parse_envelope(s, e, &env)) break;
        int nm = walk_members(env.kind_end, e, mem);
        if (nm < 0) break;
        PyObject *kind = kind_str(env.kind_s, env.kind_t);
        if (!kind) goto fail;
        int is_known = PySet_Contains(known, kind);
        int is_prep = is_known > 0 ? PySet_Contains(prep, kind) : 0;
        Py_DECREF(kind); /* the kind cache holds it */
        if (is_known < 0 || is_prep < 0) goto fail;
        if (!is_known || key_is(env.kind_s, env.kind_t, "work")) break;
        memset(v, 0, sizeof v);
        int defer = 0;
        int directive = 0, has_directive = 0;
        char sp_hex[64];
        cp k0 = env.kind_s, k1 = env.kind_t;
        /* payload facts (session_ledger.payload_facts) */
        if (key_is(k0, k1, "message")) {
            const Member *meta = member(mem, nm, "meta"), *msg = member(mem, nm, "message");
            Span f[4];
            int got[4];
            if (meta && *meta->vs == '{') {
                static const char *const META[] = {"control", "model", "stop_reason", "usage"};
                if (!find_keys(meta->vs, meta->me, META, 4, f, got)) defer = 1;
                else {
                    if (got[0]) jstr(f[0].s, f[0].e, &v[C_CONTROL]);
                    if (got[1]) jstr(f[1].s, f[1].e, &v[C_MODEL]);
                    if (got[2]) jstr(f[2].s, f[2].e, &v[C_STOP]);
                    if (got[3] && *f[3].s == '{') {
                        static const char *const USAGE[] = {"input_tokens", "output_tokens",
                                                            "cache_read_input_tokens", "cache_creation_input_tokens"};
                        Span u = f[3];
                        if (!find_keys(u.s, u.e, USAGE, 4, f, got)) defer = 1;
                        else {
                            for (int i = 0; i < 4; i++)
                                if (got[i]) jint(f[i].s, f[i].e, &v[C_IT + i]);
                        }
                    }
                }
            }
            Py_ssize_t tu = 0, trc = 0, trb = 0;
            int has_text = 0;
            if (msg && *msg->vs == '{') {
                static const char *const MSG[] = {"role", "content"};
                if (!find_keys(msg->vs, msg->me, MSG, 2, f, got)) defer = 1;
                else if (got[0]) jstr(f[0].s, f[0].e, &v[C_ROLE]);
                Span c = f[1];
                if (!defer && got[1] && *c.s == '[' && c.s[1] != ']') {
                    static const char *const BLOCK[] = {"type", "content"};
                    cp p = c.s + 1;
                    for (;;) {
                        cp q;
                        Span bf[2] = {{NULL, NULL}, {NULL, NULL}};
                        int bgot[2];
                        if (*p == '{') {
                            q = find_keys(p, c.e, BLOCK, 2, bf, bgot);
                            if (!q) {
                                defer = 1;
                                break;
                            }
                            Span t = bf[0];
                            if (bgot[0]) {
                                if (t.e - t.s == 10 && memcmp(t.s, "\"tool_use\"", 10) == 0) {
                                    tu++;
                                } else if (t.e - t.s == 13 && memcmp(t.s, "\"tool_result\"", 13) == 0) {
                                    trc++;
                                    Span tc = bf[1];
                                    if (bgot[1]) {
                                        if (*tc.s == '"') trb += decoded_len(tc.s, tc.e);
                                        else if (!(tc.e - tc.s == 4 && memcmp(tc.s, "null", 4) == 0))
                                            defer = 1; /* its re-encoded length: the reference path */
                                    }
                                } else if (t.e - t.s == 6 && memcmp(t.s, "\"text\"", 6) == 0) {
                                    has_text = 1;
                                } else if (*t.s == '"') {
                                    /* a type written with escapes may still decode to one of the above */
                                    for (cp x = t.s; x < t.e; x++)
                                        if (*x == '\\') defer = 1;
                                }
                            }
                        } else {
                            q = skip_value(p, c.e);
                        }
                        if (q >= c.e || *q == ']') break;
                        p = q + 1;
                    }
                }
            }
            v[C_TU].t = v[C_TRC].t = v[C_TRB].t = E_INT;
            v[C_TU].i = tu, v[C_TRC].i = trc, v[C_TRB].i = trb;
            directive = v[C_CONTROL].t == E_NULL && has_text && trc == 0 && jstr_is(&v[C_ROLE], "user");
            has_directive = 1;
        } else if (key_is(k0, k1, "receipt")) {
            const Member *m;
            if ((m = member(mem, nm, "purpose"))) jstr(m->vs, m->me, &v[C_PURPOSE]);
            if ((m = member(mem, nm, "provider"))) jstr(m->vs, m->me, &v[C_PROVIDER]);
            if ((m = member(mem, nm, "model"))) jstr(m->vs, m->me, &v[C_MODEL]);
            if ((m = member(mem, nm, "prefix_digest")) && *m->vs == '"' && m->me - m->vs > 2)
                jstr(m->vs, m->me, &v[C_PREFIX_DIGEST]);
            if ((m = member(mem, nm, "prefix_tokens"))) jint(m->vs, m->me, &v[C_PREFIX_TOKENS]);
            if ((m = member(mem, nm, "attempts")) && *m->vs == '[') {
                Py_ssize_t count = 0;
                if (m->vs[1] != ']') {
                    cp p = m->vs + 1;
                    for (;;) {
                        cp q = skip_value(p, m->me);
                        count++;
                        if (q >= m->me || *q == ']') break;
                        p = q + 1;
                    }
                }
                v[C_ATTEMPTS].t = E_INT, v[C_ATTEMPTS].i = count;
            }
        } else if (key_is(k0, k1, "activity")) {
            const Member *m;
            if ((m = member(mem, nm, "activity_kind"))) jstr(m->vs, m->me, &v[C_ACT_KIND]);
            if ((m = member(mem, nm, "label"))) jstr(m->vs, m->me, &v[C_ACT_LABEL]);
        } else if (key_is(k0, k1, "turn_capabilities_bound") || key_is(k0, k1, "turn_capabilities_ref")) {
            const Member *m;
            if ((m = member(mem, nm, "epoch"))) jint(m->vs, m->me, &v[C_EPOCH]);
            if (key_is(k0, k1, "turn_capabilities_bound") && (m = member(mem, nm, "system_prompt")) &&
                *m->vs == '"') {
                if (!m->canon) defer = 1;
                else {
                    hex64(m->vs, m->me - m->vs, sp_hex);
                    v[C_SP_SHA].t = E_RAW, v[C_SP_SHA].s = sp_hex, v[C_SP_SHA].n = 64;
                    v[C_SP_BYTES].t = E_INT, v[C_SP_BYTES].i = m->me - m->vs;
                }
            }
        } else if (key_is(k0, k1, "header")) {
            const Member *c = member(mem, nm, "contract");
            if (c && *c->vs == '{') {
                static const char *const CONTRACT[] = {"app_version", "provider", "model", "system_prompt"};
                Span f[4];
                int got[4];
                if (!find_keys(c->vs, c->me, CONTRACT, 4, f, got)) defer = 1;
                else {
                    if (got[0]) jstr(f[0].s, f[0].e, &v[C_APP_VERSION]);
                    if (got[1]) jstr(f[1].s, f[1].e, &v[C_PROVIDER]);
                    if (got[2]) jstr(f[2].s, f[2].e, &v[C_MODEL]);
                    Span sp = f[3];
                    if (got[3] && *sp.s == '"') {
                        int canon = 1, esc = 0;
                        scan_string(sp.s, sp.e, &canon, &esc);
                        if (!canon) defer = 1;
                        else {
                            hex64(sp.s, sp.e - sp.s, sp_hex);
                            v[C_SP_SHA].t = E_RAW, v[C_SP_SHA].s = sp_hex, v[C_SP_SHA].n = 64;
                            v[C_SP_BYTES].t = E_INT, v[C_SP_BYTES].i = sp.e - sp.s;
                        }
                    }
                }
            }
        }
        if (defer) break;
        /* the chain (ChainVerifier.link) */
        char digest[64], body[64];
        {
            unsigned char md_line[32], md_body[32];
            sha256_pair(s, e - s, env.kind_end, e - env.kind_end, md_line, md_body);
            hex_of(md_line, digest);
            hex_of(md_body, body);
        }
        const char *status;
        if (!have_exp) status = STATUS_UNCHECKED;
        else if (!env.prev_s) status = STATUS_UNCHAINED;
        else if (env.prev_t - env.prev_s == exp_len && memcmp(env.prev_s, exp, exp_len) == 0) status = STATUS_OK;
        else status = STATUS_BROKEN;
        line_no++;
        Py_ssize_t off = base + pos;
        memcpy(exp, digest, 64);
        exp_len = 64, have_exp = 1, exp_changed = 1;
        /* the turn (vakaudit.ledger.vocab.turn_step) */
        int row_turn_no_set = 1;
        Py_ssize_t row_turn_no = 0;
        int row_turn_id_from_state = 0;
        if (has_directive && directive) {
            turn_no++;
            PyObject *ident = ascii_str(env.id_s, env.id_t);
            if (!ident) goto fail;
            Py_SETREF(turn_id, ident);
            in_prep = 0;
            row_turn_no = turn_no, row_turn_id_from_state = 1;
        } else if (is_prep || (key_is(k0, k1, "intent") && in_prep)) {
            in_prep = 1;
            row_turn_no = turn_no + 1;
        } else if (key_is(k0, k1, "header")) {
            row_turn_no_set = 0;
        } else {
            in_prep = 0;
            row_turn_no_set = turn_no != 0;
            row_turn_no = turn_no, row_turn_id_from_state = 1;
        }
        if (row_turn_no_set) v[C_TURN_NO].t = E_INT, v[C_TURN_NO].i = row_turn_no;
        if (env.at_s) {
            v[C_TURN_ID].t = E_RAW, v[C_TURN_ID].s = (const char *)env.at_s, v[C_TURN_ID].n = env.at_t - env.at_s;
        } else if (row_turn_id_from_state && turn_id != Py_None) {
            Py_ssize_t tn;
            const char *t = PyUnicode_AsUTF8AndSize(turn_id, &tn);
            if (!t) goto fail;
            v[C_TURN_ID].t = E_RAW, v[C_TURN_ID].s = t, v[C_TURN_ID].n = tn;
        }
        Py_ssize_t size = lf + 1 - s;
#define RAW(col, a, b) (v[col].t = E_RAW, v[col].s = (const char *)(a), v[col].n = (b) - (a))
        v[C_OFFSET].t = v[C_LINE].t = v[C_SIZE].t = E_INT;
        v[C_OFFSET].i = off, v[C_LINE].i = line_no, v[C_SIZE].i = size;
        RAW(C_KIND, k0, k1);
        RAW(C_ID, env.id_s, env.id_t);
        if (env.par_s) RAW(C_PARENT, env.par_s, env.par_t);
        RAW(C_TS, env.ts_s, env.ts_t);
        if (env.prev_s) RAW(C_PREV, env.prev_s, env.prev_t);
        RAW(C_DIGEST, digest, digest + 64);
        RAW(C_STATUS, status, status + strlen(status));
        RAW(C_BODY, body, body + 64);
#undef RAW
        if (has_directive) v[C_DIRECTIVE].t = E_INT, v[C_DIRECTIVE].i = directive;
        ec_ts_at(ec, v);
        if (status == STATUS_OK || status == STATUS_BROKEN)
            v[C_CHAIN_OK].t = E_INT, v[C_CHAIN_OK].i = status == STATUS_OK;
        /* entry_fields */
        PyObject *kobj = kind_str(k0, k1);
        if (!kobj) goto fail;
        Py_ssize_t used = 0;
        int failed = 0;
        for (int i = 0; i < nm && !failed; i++) {
            if (acc_add(acc, &acc_used, fields, kobj, mem[i].ks, mem[i].kt - mem[i].ks, mem[i].me - mem[i].ms) < 0)
                failed = 1;
            used += mem[i].me - mem[i].ms;
        }
        if (!failed && acc_add(acc, &acc_used, fields, kobj, NULL, 0, size - used) < 0) failed = 1;
        Py_DECREF(kobj);
        if (failed || ec_append(ec, v) < 0) goto fail;
        pos = lf + 1 - buf;
        n++;
    }
    if (acc_flush(acc, fields) < 0) goto fail;
    if (exp_changed) {
        PyObject *x = PyUnicode_DecodeASCII(exp, 64, NULL);
        if (!x || PyList_SetItem(state, 0, x) < 0) goto fail; /* steals x */
    }
    {
        PyObject *t = PyLong_FromSsize_t(turn_no);
        if (!t || PyList_SetItem(state, 1, t) < 0) goto fail;
        if (PyList_SetItem(state, 2, turn_id) < 0) { /* steals turn_id */
            turn_id = NULL;
            goto fail;
        }
        turn_id = NULL;
        if (PyList_SetItem(state, 3, PyBool_FromLong(in_prep)) < 0) goto fail;
    }
    result = PyLong_FromSsize_t(pos);
fail:
    for (int i = 0; i < ACC_SLOTS; i++) Py_CLEAR(acc[i].kind); /* after an error: sums not handed over */
    Py_XDECREF(turn_id);
    PyMem_Free(exp);
    PyBuffer_Release(&view);
    return result;
}

/* -- JSONL sidecar columns ------------------------------------------------------------------------ */

/*
 * jsonl_columns reads the complete lines of a sidecar chunk straight into Arrow buffers, one per
 * declared column, for vakaudit.artifacts._jsonl.read_jsonl. It vouches only for the plain case: a
 * line that is not a strictly valid compact JSON object (the grammar of scan_value, nesting at most
 * MAX_DEPTH), a requested top-level key written twice, a top-level key holding a backslash escape, a
 * required key missing, or a value whose JSON type the column would coerce (a number in a string
 * column, a float in an int column, ...) declines the whole chunk, which the caller then reads with
 * the reference Python path. Values the Python side must finish (a json=True or key-path value that
 * is not in the form orjson writes back) are listed as fixes instead.
 */

enum { J_STR, J_INT, J_FLOAT, J_BOOL, J_TS, J_UTF8LEN, J_COUNT, J_JSON, J_PATH };

#define J_MAX_KEYS 64
#define J_MAX_PATH 8
#define J_MAX_OBJ_KEYS 64 /* keys compared for duplicates per object in a json=True value */

/* The members of one top-level object value, indexed once per row for the columns that read into it
   (json=True and key-path columns, e.g. trace, trace.run, trace.session). */
typedef struct {
    Py_ssize_t stamp; /* row + 1 when built for that row */
    int ok;           /* an object whose members (at most J_MAX_OBJ_KEYS) are indexed */
    int canon;        /* orjson.dumps(orjson.loads(value)) gives back its bytes (see j_canon) */
    int esc;          /* a key holds an escape or a non-ASCII byte (find_in then defers) */
    int nm;
    cp ks[J_MAX_OBJ_KEYS], kt[J_MAX_OBJ_KEYS], vs[J_MAX_OBJ_KEYS], ve[J_MAX_OBJ_KEYS];
} JObj;

typedef struct {
    int mode, final, slot, npath;
    JObj *obj;                    /* the member index of its top-level value, or NULL */
    const char *path[J_MAX_PATH]; /* sub-keys of a key-path column (NUL-terminated, no NUL inside) */
    unsigned char *valid;         /* validity bitmap, one bit per row */
    JBuf data;                    /* values, or the UTF-8 bytes of a string column */
    int32_t *offs;                /* string columns: n + 1 offsets */
    Py_ssize_t upto;              /* string columns: offs[0..upto] are set */
    Py_ssize_t nulls, nvalid;
} JCol;

static int j_is_string_mode(int mode) { return mode == J_STR || mode == J_TS || mode == J_JSON; }

static int j_is_null(cp s, cp e) { return !s || (e - s == 4 && s[0] == 'n'); }

/* Decode the JSON string [s, e) (s at its opening quote, already validated) into out; returns bytes. */
static size_t j_decode(cp s, cp e, char *out) {
    size_t n = 0;
    cp a = s + 1, b = e - 1;
    for (cp p = a; p < b;) {
        cp q = memchr(p, '\\', b - p);
        if (!q) q = b;
        memcpy(out + n, p, q - p);
        n += q - p;
        p = q;
        if (p >= b) break;
        unsigned char c = p[1];
        p += 2;
        switch (c) {
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'u': {
            long v = (hexval(p[0]) << 12) | (hexval(p[1]) << 8) | (hexval(p[2]) << 4) | hexval(p[3]);
            p += 4;
            if (v >= 0xD800 && v <= 0xDBFF) { /* a validated pair: \uD8xx\uDCxx */
                long w = (hexval(p[2]) << 12) | (hexval(p[3]) << 8) | (hexval(p[4]) << 4) | hexval(p[5]);
                p += 6;
                v = 0x10000 + ((v - 0xD800) << 10) + (w - 0xDC00);
                out[n++] = (char)(0xF0 | (v >> 18));
                out[n++] = (char)(0x80 | ((v >> 12) & 0x3F));
                out[n++] = (char)(0x80 | ((v >> 6) & 0x3F));
                out[n++] = (char)(0x80 | (v & 0x3F));
            } else if (v < 0x80) {
                out[n++] = (char)v;
            } else if (v < 0x800) {
                out[n++] = (char)(0xC0 | (v >> 6));
                out[n++] = (char)(0x80 | (v & 0x3F));
            } else {
                out[n++] = (char)(0xE0 | (v >> 12));
                out[n++] = (char)(0x80 | ((v >> 6) & 0x3F));
                out[n++] = (char)(0x80 | (v & 0x3F));
            }
            break;
        }
        default: out[n++] = (char)c; break; /* " \ / */
        }
    }
    return n;
}

static int j_is_int(cp s, cp e) {
    for (cp p = s; p < e; p++)
        if (*p == '.' || *p == 'e' || *p == 'E') return 0;
    return 1;
}

/* An integer literal already validated by scan_number (at most 18 digits): its value. */
static long long j_int(cp s, cp e) {
    int neg = *s == '-';
    long long v = 0;
    for (cp p = s + neg; p < e; p++) v = v * 10 + (*p - '0');
    return neg ? -v : v;
}

/*
 * The end of the JSON value at p when orjson.dumps(orjson.loads(value)) gives back exactly its bytes,
 * else NULL: strings in the escape form orjson writes, integers only (no float, no -0), no object
 * with a key written twice (a dict keeps one).
 */
static cp j_canon(cp p, cp e) {
    switch (*p) {
    case '"': {
        int canon = 1, esc = 0;
        cp q = scan_string(p, e, &canon, &esc);
        return q && canon ? q : NULL;
    }
    case '{': {
        cp ks[J_MAX_OBJ_KEYS], kt[J_MAX_OBJ_KEYS];
        int nk = 0;
        p++;
        if (*p == '}') return p + 1;
        for (;;) {
            int canon = 1, esc = 0;
            cp q = scan_string(p, e, &canon, &esc);
            if (!q || !canon || nk == J_MAX_OBJ_KEYS) return NULL;
            for (int i = 0; i < nk; i++) /* canonical spellings are equal exactly when the keys are */
                if (kt[i] - ks[i] == q - p && memcmp(ks[i], p, q - p) == 0) return NULL;
            ks[nk] = p, kt[nk] = q, nk++;
            p = j_canon(q + 1, e);
            if (!p) return NULL;
            if (*p == '}') return p + 1;
            p++;
        }
    }
    case '[':
        p++;
        if (*p == ']') return p + 1;
        for (;;) {
            p = j_canon(p, e);
            if (!p) return NULL;
            if (*p == ']') return p + 1;
            p++;
        }
    case 't': return p + 4;
    case 'f': return p + 5;
    case 'n': return p + 4;
    default: {
        cp q = scan_number(p, e);
        if (!q || !j_is_int(p, q) || (q - p == 2 && p[0] == '-' && p[1] == '0')) return NULL;
        return q;
    }
    }
}

static inline void j_set_valid(JCol *c, Py_ssize_t row) {
    c->valid[row >> 3] |= (unsigned char)(1u << (row & 7));
    c->nvalid++;
}

/* Clinger's fast path: a decimal without exponent whose digits fit 2^53, divided by an exact power of
   ten, is correctly rounded by one IEEE division (like strtod); 0 when the literal is not that case. */
static int j_fast_double(cp s, cp e, double *out) {
    static const double P10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    int neg = *s == '-';
    uint64_t m = 0;
    int digits = 0, frac = -1;
    for (cp p = s + neg; p < e; p++) {
        if (*p == '.') {
            frac = 0;
            continue;
        }
        if (!is_digit(*p)) return 0; /* an exponent */
        m = m * 10 + (*p - '0');
        if (m) digits++; /* leading zeros are not significant */
        if (frac >= 0) frac++;
        if (digits > 15) return 0;
    }
    if (frac < 0 || frac > 22) return 0;
    double v = (double)m / P10[frac];
    *out = neg ? -v : v;
    return 1;
}

static inline void j_fill_offsets(JCol *c, Py_ssize_t row) {
    int32_t at = (int32_t)c->data.len;
    while (c->upto < row) c->offs[++c->upto] = at;
}

/*
 * Put the value [s, e) (s NULL: absent) in row ``row`` of column c, read with ``mode``. A null is
 * nothing to write: the validity bit stays clear and a string's offsets are filled in later. Returns
 * 0 when done, 1 when the value is not the plain case (nothing written), -1 on a Python error.
 */
static inline int j_emit(JCol *c, int mode, Py_ssize_t row, cp s, cp e) {
    if (j_is_null(s, e)) return 0;
    switch (mode) {
    case J_STR:
    case J_TS:
    case J_JSON: {
        if (mode == J_JSON) {
            if (j_canon(s, e) != e) return 1;
        } else if (*s != '"') {
            return 1;
        }
        if (jbuf_grow(&c->data, e - s) < 0) return -1;
        j_fill_offsets(c, row);
        if (mode == J_JSON) {
            memcpy(c->data.p + c->data.len, s, e - s);
            c->data.len += e - s;
        } else {
            c->data.len += j_decode(s, e, c->data.p + c->data.len);
        }
        c->offs[++c->upto] = (int32_t)c->data.len;
        j_set_valid(c, row);
        return 0;
    }
    case J_UTF8LEN:
        if (*s == '"') {
            ((int64_t *)c->data.p)[row] = decoded_len(s, e);
            j_set_valid(c, row);
        }
        return 0;
    case J_COUNT:
        if (*s == '{') return 1; /* a dict collapses keys written twice: the reference counts */
        if (*s == '[') {
            int64_t count = 0;
            if (s[1] != ']') {
                cp p = s + 1;
                for (;;) {
                    int canon = 1;
                    p = scan_value(p, e, 1, &canon);
                    if (!p) return 1;
                    count++;
                    if (*p == ']') break;
                    p++;
                }
            }
            ((int64_t *)c->data.p)[row] = count;
            j_set_valid(c, row);
        }
        return 0;
    case J_INT:
        if (!(*s == '-' || is_digit(*s)) || !j_is_int(s, e)) return 1; /* not an integer literal */
        ((int64_t *)c->data.p)[row] = j_int(s, e);
        j_set_valid(c, row);
        return 0;
    case J_FLOAT: {
        if (!(*s == '-' || is_digit(*s))) return 1; /* a string, bool, object or array */
        double dv;
        if (j_is_int(s, e)) {
            if (e - s - (*s == '-') > 15) return 1; /* beyond exact doubles: the reference decides */
            dv = (double)j_int(s, e);               /* -0 is the int 0: +0.0 */
        } else if (!j_fast_double(s, e, &dv)) {
            char tmp[72];
            if (e - s > 64) return 1;
            memcpy(tmp, s, e - s);
            tmp[e - s] = 0;
            char *end = NULL;
            dv = PyOS_string_to_double(tmp, &end, NULL);
            if (dv == -1.0 && PyErr_Occurred()) return -1;
            if (end != tmp + (e - s)) return 1;
        }
        ((double *)c->data.p)[row] = dv;
        j_set_valid(c, row);
        return 0;
    }
    case J_BOOL:
        if (*s == 't') c->data.p[row >> 3] |= (char)(1u << (row & 7));
        else if (*s != 'f') return 1;
        j_set_valid(c, row);
        return 0;
    default:
        return 1;
    }
}

/* Index the members of the (validated, non-null) value [s, e) and decide whether it is canonical. */
static void j_index(cp s, cp e, JObj *o) {
    o->ok = 0, o->esc = 0, o->nm = 0;
    if (*s != '{') {
        o->canon = j_canon(s, e) == e;
        return;
    }
    o->ok = 1, o->canon = 1;
    cp p = s + 1;
    if (*p == '}') return;
    for (;;) {
        int canon = 1, esc = 0;
        cp q = scan_string(p, e, &canon, &esc);
        if (!q || o->nm == J_MAX_OBJ_KEYS) { /* (validated: q is never NULL) */
            o->ok = 0, o->canon = 0;
            return;
        }
        if (!canon) o->canon = 0;
        if (esc) o->esc = 1;
        for (int i = 0; i < o->nm && o->canon; i++) /* a key written twice: a dict keeps one */
            if (o->kt[i] - o->ks[i] == q - 1 - (p + 1) && memcmp(o->ks[i], p + 1, q - 1 - (p + 1)) == 0)
                o->canon = 0;
        o->ks[o->nm] = p + 1, o->kt[o->nm] = q - 1;
        cp v = q + 1;
        cp r = o->canon ? j_canon(v, e) : NULL;
        if (!r) {
            int c2 = 1;
            o->canon = 0;
            r = scan_value(v, e, 1, &c2);
            if (!r) {
                o->ok = 0;
                return;
            }
        }
        o->vs[o->nm] = v, o->ve[o->nm] = r;
        o->nm++;
        if (*r == '}') return;
        p = r + 1;
    }
}

/* A json=True column: 0 done, 1 left null for the caller to re-encode, -1 on error. */
static int j_emit_json(JCol *c, Py_ssize_t row, cp s, cp e) {
    if (j_is_null(s, e)) return 0;
    if (c->obj ? !c->obj->canon : j_canon(s, e) != e) return 1;
    if (jbuf_grow(&c->data, e - s) < 0) return -1;
    j_fill_offsets(c, row);
    memcpy(c->data.p + c->data.len, s, e - s);
    c->data.len += e - s;
    c->offs[++c->upto] = (int32_t)c->data.len;
    j_set_valid(c, row);
    return 0;
}

/* A key-path column: 0 done, 1 left null for the caller to fix, -1 on error. */
static int j_emit_path(JCol *c, Py_ssize_t row, cp s, cp e) {
    for (int i = 0; i < c->npath && !j_is_null(s, e); i++) {
        if (*s != '{') return 0; /* dig: a non-object has no keys */
        const JObj *o = i == 0 ? c->obj : NULL;
        if (o && o->ok) {
            if (o->esc) return 1; /* as find_in: a key with escapes might spell this one */
            size_t kl = strlen(c->path[0]);
            int hit = -1;
            for (int m = o->nm - 1; m >= 0 && hit < 0; m--) /* the last of keys written twice */
                if ((size_t)(o->kt[m] - o->ks[m]) == kl && memcmp(o->ks[m], c->path[0], kl) == 0) hit = m;
            if (hit < 0) return 0;
            s = o->vs[hit], e = o->ve[hit];
            continue;
        }
        Span v;
        int r = find_in(s, e, c->path[i], &v);
        if (r < 0) return 1;
        if (r == 0) return 0;
        s = v.s, e = v.e;
    }
    return j_emit(c, c->final, row, s, e);
}

PyDoc_STRVAR(jsonl_columns_doc,
"jsonl_columns(buf, keys, cols, required, line_no, offset) -> None | (rows, where, columns, fixes)\n\n"
"Read every line of buf (complete lines, each ending in LF) into typed Arrow buffers. keys is a\n"
"tuple of the top-level keys read (bytes); cols a tuple of (mode, slot, final, path) per column,\n"
"slot indexing keys, path a tuple of sub-keys for a key-path column (mode J_PATH, its values read\n"
"with mode final); required the slots every line must have. Returns None to decline the chunk\n"
"(any line or value that is not the plain case), else rows; where, the int64 line numbers, byte\n"
"offsets and sizes (LF included) of the lines, numbered from line_no and offset on; and per\n"
"column (null_count, validity bitmap or None, values or offsets, string data or None);\n"
"fixes lists (column, row, start, end) for values the caller must finish from the top-level value\n"
"buf[start:end] (left null in the buffers).");

#define J_TABLE 256 /* open-addressing table of the requested keys */

static inline unsigned j_hash(cp k, Py_ssize_t n) {
    unsigned h = (unsigned)n * 131u;
    if (n) h += k[0] * 31u + k[n - 1] * 7u + k[n / 2];
    return h & (J_TABLE - 1);
}

static PyObject *jsonl_columns(PyObject *self, PyObject *args) {
    Py_buffer view;
    PyObject *keys_obj, *cols_obj, *req_obj;
    long long line0, offset0;
    if (!PyArg_ParseTuple(args, "y*O!O!O!LL:jsonl_columns", &view, &PyTuple_Type, &keys_obj, &PyTuple_Type,
                          &cols_obj, &PyTuple_Type, &req_obj, &line0, &offset0))
        return NULL;
    PyObject *result = NULL, *fixes = NULL;
    Py_ssize_t nkeys = PyTuple_GET_SIZE(keys_obj), ncols = PyTuple_GET_SIZE(cols_obj);
    Py_ssize_t nreq = PyTuple_GET_SIZE(req_obj);
    JCol *cols = NULL;
    int64_t *sizes = NULL;
    int *by_slot = NULL; /* the columns of each key: by_slot[first[k] .. first[k + 1]) */
    JObj *objs = NULL;
    const char *kp[J_MAX_KEYS];
    Py_ssize_t kl[J_MAX_KEYS];
    int req[J_MAX_KEYS], first[J_MAX_KEYS + 1];
    unsigned char table[J_TABLE]; /* slot + 1, 0 = empty */
    Py_ssize_t seen[J_MAX_KEYS];  /* row + 1 when the key was met on that row */
    cp vs_of[J_MAX_KEYS], ve_of[J_MAX_KEYS];
    cp buf = (cp)view.buf, bend = buf + view.len;
    memset(table, 0, sizeof table);
    if (nkeys > J_MAX_KEYS || nreq > J_MAX_KEYS) {
        PyErr_SetString(PyExc_ValueError, "jsonl_columns: too many keys");
        goto done;
    }
    for (Py_ssize_t i = 0; i < nkeys; i++) {
        PyObject *k = PyTuple_GET_ITEM(keys_obj, i);
        if (!PyBytes_Check(k)) {
            PyErr_SetString(PyExc_TypeError, "jsonl_columns: keys must be bytes");
            goto done;
        }
        kp[i] = PyBytes_AS_STRING(k), kl[i] = PyBytes_GET_SIZE(k);
        unsigned h = j_hash((cp)kp[i], kl[i]);
        while (table[h]) h = (h + 1) & (J_TABLE - 1);
        table[h] = (unsigned char)(i + 1);
        seen[i] = 0;
    }
    for (Py_ssize_t i = 0; i < nreq; i++) {
        req[i] = (int)PyLong_AsLong(PyTuple_GET_ITEM(req_obj, i));
        if (req[i] < 0 || req[i] >= nkeys) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "jsonl_columns: bad required slot");
            goto done;
        }
    }
    Py_ssize_t n = 0;
    for (cp p = buf; p < bend; n++) {
        cp lf = memchr(p, '\n', bend - p);
        if (!lf) {
            PyErr_SetString(PyExc_ValueError, "jsonl_columns: buffer must end in LF");
            goto done;
        }
        p = lf + 1;
    }
    if (view.len > INT32_MAX / 2) { /* int32 string offsets */
        result = Py_NewRef(Py_None);
        goto done;
    }
    cols = PyMem_Calloc(ncols ? ncols : 1, sizeof *cols);
    sizes = PyMem_Malloc(3 * (n ? n : 1) * sizeof *sizes); /* line numbers, offsets, sizes */
    by_slot = PyMem_Malloc((ncols ? ncols : 1) * sizeof *by_slot);
    if (!cols || !sizes || !by_slot) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t vbytes = (n + 7) / 8;
    for (Py_ssize_t j = 0; j < ncols; j++) {
        JCol *c = &cols[j];
        PyObject *spec = PyTuple_GET_ITEM(cols_obj, j);
        PyObject *path;
        if (!PyTuple_Check(spec) ||
            !PyArg_ParseTuple(spec, "iiiO!", &c->mode, &c->slot, &c->final, &PyTuple_Type, &path))
            goto done;
        c->npath = (int)PyTuple_GET_SIZE(path);
        int m = c->mode == J_PATH ? c->final : c->mode;
        if (c->slot < 0 || c->slot >= nkeys || c->npath > J_MAX_PATH || (c->mode == J_PATH) != (c->npath > 0) ||
            m < J_STR || m > J_JSON) {
            PyErr_SetString(PyExc_ValueError, "jsonl_columns: bad column");
            goto done;
        }
        for (int i = 0; i < c->npath; i++) {
            PyObject *k = PyTuple_GET_ITEM(path, i);
            if (!PyBytes_Check(k) || strlen(PyBytes_AS_STRING(k)) != (size_t)PyBytes_GET_SIZE(k)) {
                PyErr_SetString(PyExc_ValueError, "jsonl_columns: bad path key");
                goto done;
            }
            c->path[i] = PyBytes_AS_STRING(k);
        }
        c->valid = PyMem_Calloc(vbytes + 1, 1);
        if (!c->valid) {
            PyErr_NoMemory();
            goto done;
        }
        if (j_is_string_mode(m)) {
            c->offs = PyMem_Malloc((n + 1) * sizeof *c->offs);
            if (!c->offs || jbuf_grow(&c->data, 1024) < 0) {
                if (!c->offs) PyErr_NoMemory();
                goto done;
            }
            c->offs[0] = 0;
        } else {
            size_t bytes = m == J_BOOL ? (size_t)vbytes + 1 : (size_t)(n ? n : 1) * 8;
            if (jbuf_grow(&c->data, bytes) < 0) goto done;
            memset(c->data.p, 0, bytes);
            c->data.len = bytes;
        }
    }
    {
        int at = 0;
        for (Py_ssize_t k = 0; k < nkeys; k++) {
            first[k] = at;
            for (Py_ssize_t j = 0; j < ncols; j++)
                if (cols[j].slot == k) by_slot[at++] = (int)j;
        }
        first[nkeys] = at;
        /* one member index per top-level key read by json / key-path columns (a few: trace) */
        int nobj = 0;
        for (Py_ssize_t j = 0; j < ncols; j++)
            if (cols[j].mode == J_JSON || cols[j].mode == J_PATH) nobj++;
        if (nobj) {
            objs = PyMem_Calloc(nobj, sizeof *objs);
            if (!objs) {
                PyErr_NoMemory();
                goto done;
            }
        }
        nobj = 0;
        for (Py_ssize_t j = 0; j < ncols; j++) {
            if (cols[j].mode != J_JSON && cols[j].mode != J_PATH) continue;
            for (Py_ssize_t i = 0; i < j && !cols[j].obj; i++)
                if (cols[i].obj && cols[i].slot == cols[j].slot) cols[j].obj = cols[i].obj;
            if (!cols[j].obj) cols[j].obj = &objs[nobj++];
        }
    }
    surrogate_pairs = 1;
    int declined = 0;
    Py_ssize_t row = 0;
    for (cp s = buf; s < bend; row++) {
        cp e = memchr(s, '\n', bend - s);
        sizes[row] = line0 + row;
        sizes[n + row] = offset0 + (s - buf);
        sizes[2 * n + row] = e + 1 - s;
        Py_ssize_t stamp = row + 1;
        /* the line: one compact JSON object ending right before the LF */
        if (e - s < 2 || *s != '{' || e[-1] != '}') goto decline;
        cp p = s + 1;
        if (*p != '}') {
            for (;;) {
                if (*p != '"') goto decline;
                int canon = 1, esc = 0;
                cp ks = p + 1;
                p = scan_string(p, e, &canon, &esc);
                if (!p || p >= e || *p != ':') goto decline;
                cp kt = p - 1;
                if (esc && memchr(ks, '\\', kt - ks)) goto decline; /* an escape might spell a requested key */
                cp vs = p + 1;
                canon = 1;
                p = scan_value(vs, e, 1, &canon);
                if (!p || p >= e) goto decline;
                Py_ssize_t klen = kt - ks;
                for (unsigned h = j_hash(ks, klen); table[h]; h = (h + 1) & (J_TABLE - 1)) {
                    int k = table[h] - 1;
                    if (kl[k] == klen && memcmp(kp[k], ks, klen) == 0) {
                        if (seen[k] == stamp) goto decline; /* a key written twice */
                        seen[k] = stamp, vs_of[k] = vs, ve_of[k] = p;
                        break;
                    }
                }
                if (*p == '}') break;
                if (*p != ',') goto decline;
                p++;
            }
        }
        if (p + 1 != e) goto decline; /* something after the object's closing brace */
        for (Py_ssize_t i = 0; i < nreq; i++)
            if (seen[req[i]] != stamp) goto decline;
        for (Py_ssize_t k = 0; k < nkeys; k++) {
            if (seen[k] != stamp) continue;
            cp vs = vs_of[k], ve = ve_of[k];
            for (int x = first[k]; x < first[k + 1]; x++) {
                int j = by_slot[x];
                JCol *c = &cols[j];
                if (c->obj && c->obj->stamp != stamp && !j_is_null(vs, ve)) {
                    j_index(vs, ve, c->obj);
                    c->obj->stamp = stamp;
                }
                int r = c->mode == J_PATH   ? j_emit_path(c, row, vs, ve)
                        : c->mode == J_JSON ? j_emit_json(c, row, vs, ve)
                                            : j_emit(c, c->mode, row, vs, ve);
                if (r < 0) goto done_flag;
                if (r == 0) continue;
                if (c->mode != J_PATH && c->mode != J_JSON) goto decline;
                /* a json / key-path value not in the plain form: left null, finished by the caller */
                surrogate_pairs = 0; /* allocating may run Python code (a collection): no pairs there */
                if (!fixes && !(fixes = PyList_New(0))) goto done;
                PyObject *fx = Py_BuildValue("(nnnn)", (Py_ssize_t)j, row, (Py_ssize_t)(vs - buf),
                                             (Py_ssize_t)(ve - buf));
                if (!fx || PyList_Append(fixes, fx) < 0) {
                    Py_XDECREF(fx);
                    goto done;
                }
                Py_DECREF(fx);
                surrogate_pairs = 1;
            }
        }
        s = e + 1;
        continue;
    decline:
        declined = 1;
        break;
    }
    surrogate_pairs = 0;
    if (declined) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    PyObject *outs = PyList_New(ncols);
    if (!outs) goto done;
    for (Py_ssize_t j = 0; j < ncols; j++) {
        JCol *c = &cols[j];
        int m = c->mode == J_PATH ? c->final : c->mode;
        c->nulls = n - c->nvalid;
        PyObject *o;
        if (j_is_string_mode(m)) {
            j_fill_offsets(c, n);
            o = column_out(c->nulls, (const char *)c->valid, vbytes, (const char *)c->offs,
                           (n + 1) * sizeof *c->offs, c->data.p, c->data.len);
        } else {
            o = column_out(c->nulls, (const char *)c->valid, vbytes, c->data.p, m == J_BOOL ? vbytes : n * 8, NULL, -1);
        }
        if (!o) {
            Py_DECREF(outs);
            goto done;
        }
        PyList_SET_ITEM(outs, j, o);
    }
    PyObject *where = PyTuple_New(3);
    if (!where) {
        Py_DECREF(outs);
        goto done;
    }
    for (int i = 0; i < 3; i++) {
        PyObject *b = PyBytes_FromStringAndSize((const char *)(sizes + i * n), n * sizeof *sizes);
        if (!b) {
            Py_DECREF(where);
            Py_DECREF(outs);
            goto done;
        }
        PyTuple_SET_ITEM(where, i, b);
    }
    result = Py_BuildValue("(nNNO)", n, where, outs, fixes ? fixes : Py_None);
    goto done;
done_flag:
    surrogate_pairs = 0;
done:
    if (cols) {
        for (Py_ssize_t j = 0; j < ncols; j++) {
            PyMem_Free(cols[j].valid);
            PyMem_Free(cols[j].offs);
            PyMem_Free(cols[j].data.p);
        }
        PyMem_Free(cols);
    }
    PyMem_Free(sizes);
    PyMem_Free(by_slot);
    PyMem_Free(objs);
    Py_XDECREF(fixes);
    PyBuffer_Release(&view);
    return result;
}

/*
 * compact_part: the one-pass "compact" copy of a checkpoint (vakaudit.artifacts._jsonstream). Outside
 * strings every byte is kept; a string is an opening quote up to the next quote not escaped by a
 * backslash (a backslash escapes the byte after it, whatever it is). A string of more than cap raw
 * bytes becomes the placeholder "\u0000<n>" and its measures are recorded; a shorter one is kept as it
 * is. Like the Python pass: None on a truncated string, on a kept string whose raw bytes start with
 * \u0000, or when the kept size (kept bytes, 16 per placeholder) exceeds limit. Quotes and backslashes
 * are found with memchr; the next backslash is looked up once and kept until the scan passes it, so a
 * document without escapes is searched for backslashes once.
 *
 * The document is read in pieces: a piece ends before a string it does not close (the caller keeps
 * those bytes and reads more), and the placeholder count and the kept size carry from piece to piece,
 * so the pieces' outputs joined are the whole document's.
 */

typedef struct {
    Py_ssize_t raw_len;
    Py_ssize_t tail; /* offset of the last (up to 8) raw bytes */
    int tail_len;
    int escaped;
} LongMeasure;

typedef struct {
    char *out;
    Py_ssize_t out_len, out_cap;
    LongMeasure *longs;
    Py_ssize_t n_longs, longs_cap;
    Py_ssize_t first_index; /* placeholders number from here */
    Py_ssize_t size;        /* kept size so far (in and out) */
    Py_ssize_t done;        /* bytes of the buffer compacted (the rest starts an open string) */
} CompactState;

static int cs_put(CompactState *cs, const void *p, Py_ssize_t len) {
    if (cs->out_len + len > cs->out_cap) {
        Py_ssize_t cap = cs->out_cap ? cs->out_cap : 4096;
        while (cap < cs->out_len + len) cap *= 2;
        char *o = realloc(cs->out, (size_t)cap);
        if (!o) return -1;
        cs->out = o;
        cs->out_cap = cap;
    }
    memcpy(cs->out + cs->out_len, p, (size_t)len);
    cs->out_len += len;
    return 0;
}

/* 1: compacted up to cs->done, 0: declined, -1: out of memory. Runs without the GIL. An open string at
 * the end declines when final, else ends the piece at its opening quote. */
static int compact_run(cp buf, Py_ssize_t n, Py_ssize_t cap, Py_ssize_t limit, int final, CompactState *cs) {
    cp end = buf + n;
    cp pos = buf;
    cp next_bs = NULL; /* the next backslash at or after the scan (end: none; NULL: not looked up) */
    Py_ssize_t size = cs->size;
    cs->done = n;
    while (pos < end) {
        cp q = memchr(pos, '"', end - pos);
        if (!q) q = end;
        if (cs_put(cs, pos, q - pos) < 0) return -1;
        size += q - pos;
        if (size > limit) return 0;
        if (q == end) break;
        cp s = q + 1, e = NULL, p = s;
        int escaped = 0, open = 0;
        for (;;) {
            if (!e || e < p) {
                e = p < end ? memchr(p, '"', end - p) : NULL;
                if (!e) { /* unterminated string */
                    open = 1;
                    break;
                }
            }
            if (!next_bs || next_bs < p) {
                next_bs = memchr(p, '\\', end - p);
                if (!next_bs) next_bs = end;
            }
            if (e < next_bs) break;
            escaped = 1;
            p = next_bs + 2; /* the backslash and the byte it escapes */
            if (p > end) { /* unterminated escape */
                open = 1;
                break;
            }
        }
        if (open) {
            if (final) return 0;
            cs->done = q - buf;
            break;
        }
        Py_ssize_t raw_len = e - s;
        if (raw_len > cap) {
            char ph[32];
            int len = snprintf(ph, sizeof ph, "\"\\u0000%zd\"", cs->first_index + cs->n_longs);
            if (cs_put(cs, ph, len) < 0) return -1;
            if (cs->n_longs == cs->longs_cap) {
                Py_ssize_t c = cs->longs_cap ? cs->longs_cap * 2 : 64;
                LongMeasure *l = realloc(cs->longs, (size_t)c * sizeof(LongMeasure));
                if (!l) return -1;
                cs->longs = l;
                cs->longs_cap = c;
            }
            LongMeasure *m = &cs->longs[cs->n_longs++];
            m->raw_len = raw_len;
            m->tail_len = raw_len < 8 ? (int)raw_len : 8;
            m->tail = (e - m->tail_len) - buf;
            m->escaped = escaped;
            size += 16;
        } else {
            if (raw_len >= 6 && memcmp(s, "\\u0000", 6) == 0) return 0; /* would read as a placeholder */
            if (cs_put(cs, q, raw_len + 2) < 0) return -1;
            size += raw_len + 2;
        }
        if (size > limit) return 0;
        pos = e + 1;
    }
    cs->size = size;
    return 1;
}

/*
 * The slot offsets of raw_len, has_escape and tail in instances of cls (a slotted class such as
 * vakaudit.artifacts._jsonstream.LongString), so that measures are built without running its __init__
 * (a frozen dataclass's costs more than the pass itself over a checkpoint); 0 when cls does not have
 * exactly such object slots (measures are then tuples).
 */
static int measure_slots(PyObject *cls, Py_ssize_t off[3]) {
    static const char *names[3] = {"raw_len", "has_escape", "tail"};
    if (!PyType_Check(cls) || ((PyTypeObject *)cls)->tp_itemsize != 0) return 0;
    for (int i = 0; i < 3; i++) {
        PyObject *d = PyObject_GetAttrString(cls, names[i]);
        if (!d) {
            PyErr_Clear();
            return 0;
        }
        int ok = Py_IS_TYPE(d, &PyMemberDescr_Type) && ((PyMemberDescrObject *)d)->d_member->type == MEMBER_OBJECT_EX &&
                 !(((PyMemberDescrObject *)d)->d_member->flags & MEMBER_READONLY);
        if (ok) off[i] = ((PyMemberDescrObject *)d)->d_member->offset;
        Py_DECREF(d);
        if (!ok) return 0;
    }
    return 1;
}

/* (compact bytes, [measures], carried bytes, kept size) or None; the carried bytes (an open string) are
 * moved to the start of the buffer. Measures are instances of cls when it has the slots
 * (measure_slots), else (raw_len, has_escape, tail) tuples. */
static PyObject *compact_call(Py_buffer *view, Py_ssize_t n, Py_ssize_t cap, Py_ssize_t limit, int final,
                              CompactState *cs, PyObject *cls) {
    if (n < 0 || n > view->len || cap < 0) {
        PyErr_SetString(PyExc_ValueError, "compact: n must be within the buffer and cap >= 0");
        return NULL;
    }
    cp buf = view->buf;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = compact_run(buf, n, cap, limit, final, cs);
    Py_END_ALLOW_THREADS
    PyObject *result = NULL, *doc = NULL, *list = NULL;
    if (rc < 0) {
        PyErr_NoMemory();
        goto done;
    }
    if (rc == 0) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    doc = PyBytes_FromStringAndSize(cs->out ? cs->out : "", cs->out_len);
    list = doc ? PyList_New(cs->n_longs) : NULL;
    if (!list) goto done;
    Py_ssize_t off[3];
    int as_cls = cls && cls != Py_None && measure_slots(cls, off);
    for (Py_ssize_t i = 0; i < cs->n_longs; i++) {
        LongMeasure *m = &cs->longs[i];
        PyObject *t;
        if (as_cls) {
            PyTypeObject *tp = (PyTypeObject *)cls;
            t = tp->tp_alloc(tp, 0);
            if (!t) goto done;
            PyObject *v[3] = {PyLong_FromSsize_t(m->raw_len), PyBool_FromLong(m->escaped),
                              PyBytes_FromStringAndSize((const char *)buf + m->tail, m->tail_len)};
            for (int k = 0; k < 3; k++) *(PyObject **)((char *)t + off[k]) = v[k]; /* the slots were NULL */
            if (!v[0] || !v[2]) {
                Py_DECREF(t);
                goto done;
            }
        } else {
            t = Py_BuildValue("(nOy#)", m->raw_len, m->escaped ? Py_True : Py_False, (const char *)buf + m->tail,
                              (Py_ssize_t)m->tail_len);
            if (!t) goto done;
        }
        PyList_SET_ITEM(list, i, t);
    }
    Py_ssize_t carry = n - cs->done;
    if (carry && cs->done) memmove((char *)view->buf, (const char *)buf + cs->done, (size_t)carry);
    result = Py_BuildValue("(OOnn)", doc, list, carry, cs->size);
done:
    Py_XDECREF(doc);
    Py_XDECREF(list);
    free(cs->out);
    free(cs->longs);
    return result;
}

PyDoc_STRVAR(compact_part_doc,
"compact_part(buf, n, cap, limit, first_index, size, final, cls=None) -> (compact, measures, carry, size)\n"
"| None\n\n"
"The first n bytes of the writable buffer buf, one piece of a JSON document, with every string of\n"
"more than cap raw bytes replaced by the placeholder \"\\u0000<i>\" (i: its index among the measures;\n"
"tail: its last up to 8 raw bytes), exactly as vakaudit.artifacts._jsonstream._compact gives it;\n"
"None when that declines (a truncated string in the final piece, a kept string starting with \\u0000,\n"
"a compact copy over limit bytes counting 16 per placeholder). Placeholders number from first_index, size is the kept size of the pieces before. Unless final, a\n"
"string the piece does not close ends it: its carry bytes (from its opening quote) are moved to the\n"
"start of buf, for the caller to read the next piece after them. size: the kept size after this\n"
"piece. measures: instances of cls when it is a class with object slots raw_len, has_escape and tail\n"
"(made without calling it), else (raw_len, has_escape, tail) tuples.");

static PyObject *compact_part(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t n, cap, limit, first_index, size;
    int final;
    PyObject *cls = NULL;
    if (!PyArg_ParseTuple(args, "w*nnnnnp|O:compact_part", &view, &n, &cap, &limit, &first_index, &size, &final,
                          &cls))
        return NULL;
    CompactState cs = {0};
    cs.first_index = first_index;
    cs.size = size;
    PyObject *result = compact_call(&view, n, cap, limit, final, &cs, cls);
    PyBuffer_Release(&view);
    return result;
}

PyDoc_STRVAR(set_avx2_doc,
"set_avx2(on) -> bool: use the AVX2 nesting check when on and the CPU has it (the default), else the\n"
"SSE2 one; returns whether AVX2 is now used. For tests and benchmarks of both code paths.");

static PyObject *set_avx2(PyObject *self, PyObject *arg) {
    int on = PyObject_IsTrue(arg);
    if (on < 0) return NULL;
#if defined(__x86_64__) && defined(__GNUC__)
    use_avx2 = on && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("bmi");
#else
    use_avx2 = 0;
#endif
    return PyBool_FromLong(use_avx2);
}

PyDoc_STRVAR(set_shani_doc,
"set_shani(on) -> bool: compute the entries digests with the SHA extensions when on and the CPU has\n"
"them (the default), else with OpenSSL; returns whether they are now used. For tests of both paths.");

static PyObject *set_shani(PyObject *self, PyObject *arg) {
    int on = PyObject_IsTrue(arg);
    if (on < 0) return NULL;
#if defined(HAVE_SHANI_PATH)
    use_shani = on && cpu_has_shani();
#else
    use_shani = 0;
#endif
    return PyBool_FromLong(use_shani);
}

PyDoc_STRVAR(simd_paths_doc,
"simd_paths() -> dict: which CPU-specific paths are in use: {'avx2': bool, 'sha': bool}.");

static PyObject *simd_paths(PyObject *self, PyObject *unused) {
    return Py_BuildValue("{sOsO}", "avx2", use_avx2 ? Py_True : Py_False, "sha", use_shani ? Py_True : Py_False);
}

/* ---------------------------------------------------------------------------------------------
 * walk_frames: the clean prefix of a 7.0 record chain's frames (baseline7.md §3.1, §3.4, §3.5).
 *
 * A frame is len u32 LE || flags || payload || hash, hash = SHA-256(prev || len || flags || payload).
 * The layout constants are vakaudit.storage.frames' (the one definition): the caller passes the
 * hash length and MAX_FRAME, and this function refuses a hash length other than SHA-256's.
 * It consumes frames while each has a valid length, is complete in the buffer and links; at the
 * first frame that is not all three it stops and returns where, and the Python reference walker
 * (vakaudit.storage.chain) decides what that frame is (torn tail, bad length, bad link, or simply
 * more bytes to read). So every frame it returns is one the reference walker would yield.
 */

/* SHA-256 of prev (32 bytes) || [p, p + n) */
static void link_hash(const unsigned char prev[32], cp p, size_t n, unsigned char md[32]) {
#if defined(HAVE_SHANI_PATH)
    if (use_shani) {
        uint32_t s[8];
        unsigned char t[128];
        memcpy(s, SHA_H0, 32);
        if (n < 32) {
            unsigned char small[64];
            memcpy(small, prev, 32);
            memcpy(small + 32, p, n);
            sha_blocks1(s, t, sha_tail(small, 32 + n, t));
        } else {
            unsigned char first[64];
            size_t m = n - 32, total = 32 + n;
            memcpy(first, prev, 32);
            memcpy(first + 32, p, 32);
            sha_blocks1(s, first, 1);
            sha_blocks1(s, p + 32, m / 64);
            sha_blocks1(s, t, sha_tail(p + 32 + 64 * (m / 64), total, t));
        }
        sha_out(s, md);
        return;
    }
#endif
    SHA256_CTX c;
    SHA256_Init(&c);
    SHA256_Update(&c, prev, 32);
    SHA256_Update(&c, p, n);
    SHA256_Final(md, &c);
}

PyDoc_STRVAR(walk_frames_doc,
"walk_frames(data, start, prev, hash_len, max_frame) -> (frames, end)\n\n"
"Walk the frames of a record chain in data from byte start, chained after prev (32 bytes), while\n"
"each frame has 0 < len <= max_frame, is complete in data and its stored hash equals\n"
"SHA-256(prev || len || flags || payload). frames: one (offset, len, flags, hash) per such frame;\n"
"end: the offset where the walk stopped (len(data) when every byte was consumed). Stopping is\n"
"not a verdict: the caller's reference walker reads the frame at end. hash_len must be 32.");

static PyObject *walk_frames(PyObject *self, PyObject *args) {
    Py_buffer data, prevb;
    Py_ssize_t start, hash_len, max_frame;
    if (!PyArg_ParseTuple(args, "y*ny*nn", &data, &start, &prevb, &hash_len, &max_frame)) return NULL;
    PyObject *out = NULL, *frames = NULL;
    if (hash_len != 32 || prevb.len != 32) {
        PyErr_SetString(PyExc_ValueError, "walk_frames: the link hash is SHA-256 (32 bytes), and so is prev");
        goto done;
    }
    if (start < 0 || start > data.len || max_frame <= 0 || max_frame > (Py_ssize_t)UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "walk_frames: start or max_frame out of range");
        goto done;
    }
    frames = PyList_New(0);
    if (!frames) goto done;
    cp d = (cp)data.buf;
    size_t n = (size_t)data.len, off = (size_t)start;
    unsigned char prev[32], md[32];
    memcpy(prev, prevb.buf, 32);
    while (n - off >= 4) {
        uint32_t len = (uint32_t)d[off] | (uint32_t)d[off + 1] << 8 | (uint32_t)d[off + 2] << 16 |
                       (uint32_t)d[off + 3] << 24;
        if (len == 0 || (Py_ssize_t)len > max_frame) break;
        size_t size = 4 + (size_t)len + 32;
        if (n - off < size) break;
        link_hash(prev, d + off, 4 + (size_t)len, md);
        cp stored = d + off + 4 + len;
        if (memcmp(md, stored, 32) != 0) break;
        PyObject *t = Py_BuildValue("(nkiy#)", (Py_ssize_t)off, (unsigned long)len, (int)d[off + 4],
                                    (const char *)stored, (Py_ssize_t)32);
        if (!t || PyList_Append(frames, t) < 0) {
            Py_XDECREF(t);
            Py_CLEAR(frames);
            goto done;
        }
        Py_DECREF(t);
        memcpy(prev, stored, 32);
        off += size;
    }
    out = Py_BuildValue("(Nn)", frames, (Py_ssize_t)off);
    frames = NULL;
done:
    Py_XDECREF(frames);
    PyBuffer_Release(&data);
    PyBuffer_Release(&prevb);
    return out;
}

static PyMethodDef methods[] = {
    {"scan_lines", scan_lines, METH_VARARGS, scan_lines_doc},
    {"verify_run", verify_run, METH_VARARGS, verify_run_doc},
    {"scan_entries", scan_entries, METH_VARARGS, scan_entries_doc},
    {"set_avx2", set_avx2, METH_O, set_avx2_doc},
    {"set_shani", set_shani, METH_O, set_shani_doc},
    {"simd_paths", simd_paths, METH_NOARGS, simd_paths_doc},
    {"jsonl_columns", jsonl_columns, METH_VARARGS, jsonl_columns_doc},
    {"compact_part", compact_part, METH_VARARGS, compact_part_doc},
    {"walk_frames", walk_frames, METH_VARARGS, walk_frames_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_linescan",
    "Compiled line scanner for vak session ledgers (framing, SHA-256, envelope, strict JSON check) and\n"
    "JSONL sidecars (typed Arrow column buffers).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__linescan(void) {
    init_tables();
#if defined(HAVE_SHANI_PATH)
    use_shani = cpu_has_shani();
#endif
    envelope_field = PyUnicode_InternFromString("(envelope)");
    if (!envelope_field) return NULL;
    if (PyType_Ready(&EntryColsType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    if (PyModule_AddObjectRef(m, "EntryCols", (PyObject *)&EntryColsType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    if (PyModule_AddIntConstant(m, "BODY_DIGEST", F_BODY_DIGEST) < 0 ||
        PyModule_AddIntConstant(m, "MEMBERS", F_MEMBERS) < 0 ||
        PyModule_AddIntConstant(m, "MAX_DEPTH", MAX_DEPTH) < 0 || PyModule_AddIntConstant(m, "N_COLS", N_COLS) < 0 ||
        PyModule_AddIntConstant(m, "J_STR", J_STR) < 0 || PyModule_AddIntConstant(m, "J_INT", J_INT) < 0 ||
        PyModule_AddIntConstant(m, "J_FLOAT", J_FLOAT) < 0 || PyModule_AddIntConstant(m, "J_BOOL", J_BOOL) < 0 ||
        PyModule_AddIntConstant(m, "J_TS", J_TS) < 0 || PyModule_AddIntConstant(m, "J_UTF8LEN", J_UTF8LEN) < 0 ||
        PyModule_AddIntConstant(m, "J_COUNT", J_COUNT) < 0 || PyModule_AddIntConstant(m, "J_JSON", J_JSON) < 0 ||
        PyModule_AddIntConstant(m, "J_PATH", J_PATH) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
