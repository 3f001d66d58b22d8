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
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/sha.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define MAX_DEPTH 128 /* serde_json's default recursion limit */

#define F_BODY_DIGEST 1 /* SHA-256 of the bytes after the envelope's kind value */
#define F_MEMBERS 2     /* (key, start, end, canonical) of every payload member */

typedef const unsigned char *cp;

static int use_avx2; /* set at import when the CPU has AVX2 (x86-64 builds with GCC or Clang) */

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

static const char HEX[] = "0123456789abcdef";

static PyObject *hex_digest(const unsigned char *data, size_t len) {
    unsigned char md[SHA256_DIGEST_LENGTH];
    char hex[2 * SHA256_DIGEST_LENGTH];
    SHA256(data, len, md);
    for (int i = 0; i < SHA256_DIGEST_LENGTH; i++) {
        hex[2 * i] = HEX[md[i] >> 4];
        hex[2 * i + 1] = HEX[md[i] & 15];
    }
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
 * A JSON string starting at the opening quote p. Returns the byte after the closing quote, or NULL
 * (defer). *canon is cleared when the string is not written the way serde_json / orjson write it
 * (escapes other than \" \\ \b \f \n \r \t and \u00XX for the other control characters, lowercase).
 * *escaped is set when the string holds any escape or non-ASCII byte.
 */
static cp scan_string(cp p, cp e, int *canon, int *escaped) {
    p++;
    for (;;) {
#if defined(__SSE2__)
        const __m128i quote = _mm_set1_epi8('"');
        const __m128i bslash = _mm_set1_epi8('\\');
        const __m128i space = _mm_set1_epi8(0x20);
        while (e - p >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)p);
            /* signed compare: bytes below 0x20 and bytes >= 0x80 (negative) both count */
            __m128i special = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                                           _mm_cmplt_epi8(v, space));
            int mask = _mm_movemask_epi8(special);
            if (mask) {
                p += __builtin_ctz((unsigned)mask);
                break;
            }
            p += 16;
        }
#endif
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
                if (v >= 0xD800 && v <= 0xDFFF) return NULL; /* surrogates: the reference path decides */
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
        int n = utf8_len(p, e);
        if (!n) return NULL;
        *escaped = 1;
        p += n;
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

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
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


/*
 * Validate the payload members after the envelope's kind value (p) up to the closing brace (the
 * line's last byte, e - 1), appending (key, start, end, canonical) per member to ``members`` when it
 * is not NULL. Returns 1 when plain, 0 to defer, -1 on a Python error.
 */
static int check_rest(cp s, cp p, cp e, PyObject *members) {
    for (;;) {
        if (p >= e) return 0;
        if (*p == '}') return p + 1 == e;
        if (*p != ',') return 0;
        cp mstart = p++;
        if (p >= e || *p != '"') return 0;
        int canon = 1, esc = 0;
        cp ks = p + 1;
        p = scan_string(p, e, &canon, &esc);
        if (!p || esc || p >= e || *p != ':') return 0;
        cp kt = p - 1;
        if (is_envelope_key(ks, kt - ks)) return 0; /* a repeated envelope key: the reference path decides */
        canon = 1;
        p = scan_value(p + 1, e, 1, &canon);
        if (!p) return 0;
        if (members) {
            PyObject *item = Py_BuildValue("(Nnni)", ascii_str(ks, kt), (Py_ssize_t)(mstart - s),
                                           (Py_ssize_t)(p - s), canon);
            if (!item) return -1;
            int rc = PyList_Append(members, item);
            Py_DECREF(item);
            if (rc < 0) return -1;
        }
    }
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
        unsigned char md[SHA256_DIGEST_LENGTH];
        char hex[64];
        SHA256(s, lf - s, md);
        for (int i = 0; i < SHA256_DIGEST_LENGTH; i++) {
            hex[2 * i] = HEX[md[i] >> 4];
            hex[2 * i + 1] = HEX[md[i] & 15];
        }
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

PyDoc_STRVAR(sha256_hex_doc, "sha256_hex(buf) -> str: hex SHA-256 of a bytes-like object (the C path's digest).");

static PyObject *sha256_hex(PyObject *self, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    PyObject *out = hex_digest((cp)view.buf, view.len);
    PyBuffer_Release(&view);
    return out;
}

static PyMethodDef methods[] = {
    {"scan_lines", scan_lines, METH_VARARGS, scan_lines_doc},
    {"verify_run", verify_run, METH_VARARGS, verify_run_doc},
    {"sha256_hex", sha256_hex, METH_O, sha256_hex_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_linescan",
    "Compiled line scanner for vak session ledgers (framing, SHA-256, envelope, strict JSON check).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__linescan(void) {
    init_tables();
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    if (PyModule_AddIntConstant(m, "BODY_DIGEST", F_BODY_DIGEST) < 0 ||
        PyModule_AddIntConstant(m, "MEMBERS", F_MEMBERS) < 0 ||
        PyModule_AddIntConstant(m, "MAX_DEPTH", MAX_DEPTH) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
