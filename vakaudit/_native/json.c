/* JSON validation: the byte tables, strict UTF-8, strings, numbers, values, the SIMD nesting check.
 * Part of vakaudit._native._linescan: compiled inside linescan.c's translation unit (see there). */
#include "linescan.h"

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
