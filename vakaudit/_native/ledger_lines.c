/* Ledger lines: the envelope, payload members, scan_lines (the validator's test entry point) and the
 * chain runs (VRun) read_run is built on.
 * Part of vakaudit._native._linescan: compiled inside linescan.c's translation unit (see there). */
#include "linescan.h"

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

/* The envelope of the line [s, e) (no LF) when the line has vak's envelope and ends in '}'. */
static int line_envelope(cp s, cp e, Envelope *env) {
    return e - s >= 2 && e[-1] == '}' && parse_envelope(s, e, env);
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
    if (!line_envelope(s, e, &env)) return NULL;
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
"or were left for the next call.\n\n"
"It exists for the tests of the JSON validator (tests/native): vakaudit reads ledgers with read_run.");

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

/*
 * A verification run (read_run): what the next line is checked against (the chain expectation, the
 * previous timestamp key and id) and one list per column of the lines taken.
 */
typedef struct {
    PyObject *starts, *ids, *parents, *kinds, *tss, *digests, *flagged;
    PyObject *at_turns;     /* (index, at_turn) of the lines whose envelope carries one */
    PyObject *expected_obj; /* the caller's expectation (borrowed): handed back when no line is taken */
    const char *exp;        /* the expectation's UTF-8 bytes (the caller's, then last), NULL: none */
    Py_ssize_t exp_len;
    char last[64]; /* the digest of the last line taken */
    unsigned char prev_key[29];
    int have_key;
    cp prev_id_s, prev_id_t;
    PyObject *prev_id_obj; /* the previous line's id, borrowed: the ids list holds it */
    Py_ssize_t long_line;
    Py_ssize_t n; /* lines taken */
} VRun;

static void vrun_close(VRun *r) {
    Py_CLEAR(r->starts);
    Py_CLEAR(r->ids);
    Py_CLEAR(r->parents);
    Py_CLEAR(r->kinds);
    Py_CLEAR(r->tss);
    Py_CLEAR(r->digests);
    Py_CLEAR(r->flagged);
    Py_CLEAR(r->at_turns);
}

/* Start a run from the caller's expectation (str or None) and timestamp key (29 bytes or None).
 * 0, or -1 with an error set (vrun_close releases what was made). */
static int vrun_open(VRun *r, const char *fn, PyObject *expected_obj, PyObject *ts_obj, Py_ssize_t long_line) {
    memset(r, 0, sizeof *r);
    r->expected_obj = expected_obj;
    r->long_line = long_line;
    if (expected_obj != Py_None && !(r->exp = PyUnicode_AsUTF8AndSize(expected_obj, &r->exp_len))) return -1;
    if (ts_obj != Py_None) {
        char *x;
        Py_ssize_t n;
        if (PyBytes_AsStringAndSize(ts_obj, &x, &n) < 0) return -1;
        if (n != 29) {
            PyErr_Format(PyExc_ValueError, "%s: ts_key must be 29 bytes", fn);
            return -1;
        }
        memcpy(r->prev_key, x, 29);
        r->have_key = 1;
    }
    r->starts = PyList_New(0), r->ids = PyList_New(0), r->parents = PyList_New(0), r->kinds = PyList_New(0);
    r->tss = PyList_New(0), r->digests = PyList_New(0), r->flagged = PyList_New(0), r->at_turns = PyList_New(0);
    if (!r->starts || !r->ids || !r->parents || !r->kinds || !r->tss || !r->digests || !r->flagged || !r->at_turns)
        return -1;
    return 0;
}

static int append_new(PyObject *list, PyObject *o) {
    if (!o) return -1;
    int rc = PyList_Append(list, o);
    Py_DECREF(o);
    return rc;
}

/*
 * Take the line [s, lf) at buf index pos, whose envelope is env and SHA-256 hex: its flags against the
 * run's expectation (ChainVerifier.link's rule: prev_hash equal to the expected digest, any length),
 * timestamp key and previous id, which then become this line's; its columns appended. Returns its
 * flags (V_*), or -1 on a Python error.
 */
static int vrun_take(VRun *r, Py_ssize_t pos, cp s, cp lf, const Envelope *env, const char hex[64]) {
    int bits = 0;
    if (r->exp) {
        if (!env->prev_s) bits |= V_UNCHAINED;
        else if (env->prev_t - env->prev_s != r->exp_len || memcmp(env->prev_s, r->exp, r->exp_len) != 0)
            bits |= V_BROKEN;
    }
    memcpy(r->last, hex, 64);
    r->exp = r->last, r->exp_len = 64;
    unsigned char key[29];
    ts_key(env->ts_s, env->ts_t, key);
    if (r->have_key && memcmp(key, r->prev_key, 29) < 0) bits |= V_TS_BACK;
    memcpy(r->prev_key, key, 29);
    r->have_key = 1;
    if (lf - s > r->long_line) bits |= V_LONG;
    if (env->par_s) {
        size_t pl = env->par_t - env->par_s;
        if (!r->prev_id_s || (size_t)(r->prev_id_t - r->prev_id_s) != pl ||
            memcmp(r->prev_id_s, env->par_s, pl) != 0 ||
            ((size_t)(env->id_t - env->id_s) == pl && memcmp(env->id_s, env->par_s, pl) == 0))
            bits |= V_PARENT;
    }
    r->prev_id_s = env->id_s, r->prev_id_t = env->id_t;
    if (append_new(r->starts, PyLong_FromSsize_t(pos)) < 0) return -1;
    PyObject *id_obj = ascii_str(env->id_s, env->id_t);
    if (!id_obj) return -1;
    PyObject *o;
    if (!env->par_s) o = Py_NewRef(Py_None);
    else if (!(bits & V_PARENT) && r->prev_id_obj) o = Py_NewRef(r->prev_id_obj); /* the previous line's id */
    else o = ascii_str(env->par_s, env->par_t);
    if (append_new(r->parents, o) < 0) {
        Py_DECREF(id_obj);
        return -1;
    }
    r->prev_id_obj = id_obj; /* borrowed once the ids list holds it */
    if (append_new(r->ids, id_obj) < 0) {
        r->prev_id_obj = NULL;
        return -1;
    }
    if (append_new(r->kinds, kind_str(env->kind_s, env->kind_t)) < 0 ||
        append_new(r->tss, ascii_str(env->ts_s, env->ts_t)) < 0 ||
        append_new(r->digests, PyUnicode_FromStringAndSize(hex, 64)) < 0)
        return -1;
    if (bits && append_new(r->flagged, Py_BuildValue("(niN)", r->n, bits,
                                                     env->prev_s ? ascii_str(env->prev_s, env->prev_t)
                                                                 : Py_NewRef(Py_None))) < 0)
        return -1;
    if (env->at_s && append_new(r->at_turns, Py_BuildValue("(nN)", r->n, ascii_str(env->at_s, env->at_t))) < 0)
        return -1;
    r->n++;
    return bits;
}

/*
 * The pass over the complete lines of buf[pos:end], at most max_lines - r->n of them, while each is a
 * plain entry: vak's envelope and either (a) attested by the next line's prev_hash and nested at most
 * MAX_DEPTH levels, or (b) strict JSON in vak's compact form (walk_members). Returns the index after
 * the last line taken, -1 on a Python error.
 */
static Py_ssize_t vrun_lines(VRun *r, cp buf, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t max_lines) {
    cp bend = buf + end;
    Envelope cur, nxt;
    int have_cur = 0;
    cp next_lf = NULL; /* the LF of the line after the current one, once found */
    while (r->n < max_lines && buf + pos < bend) {
        cp s = buf + pos;
        cp lf = next_lf ? next_lf : memchr(s, '\n', bend - s);
        next_lf = NULL;
        if (!lf) break;
        if (!have_cur && !line_envelope(s, lf, &cur)) break;
        /* the next line's envelope, when complete: its prev_hash attests this line */
        int attested = 0;
        have_cur = 0;
        char hex[64];
        hex64(s, lf - s, hex);
        cp ns = lf + 1;
        cp nlf = ns < bend ? memchr(ns, '\n', bend - ns) : NULL;
        next_lf = nlf;
        if (nlf && line_envelope(ns, nlf, &nxt)) {
            have_cur = 1; /* nxt becomes cur on the next iteration */
            attested = nxt.prev_s && nxt.prev_t - nxt.prev_s == 64 && memcmp(nxt.prev_s, hex, 64) == 0;
        }
        int ok = attested ? nesting_ok(cur.kind_end, lf, 1) && (cur.kind_end[0] == ',' || cur.kind_end[0] == '}')
                          : check_rest(s, cur.kind_end, lf, NULL);
        if (ok < 0) return -1;
        if (!ok) break;
        if (vrun_take(r, pos, s, lf, &cur, hex) < 0) return -1;
        if (have_cur) cur = nxt;
        pos = lf + 1 - buf;
    }
    return pos;
}

/* (next_pos, starts, ids, parents, kinds, tss, digests, flagged, expected, ts_key, at_turns) */
static PyObject *vrun_result(VRun *r, Py_ssize_t pos) {
    PyObject *exp = r->n ? PyUnicode_FromStringAndSize(r->last, 64) : Py_NewRef(r->expected_obj);
    PyObject *key = r->have_key ? PyBytes_FromStringAndSize((const char *)r->prev_key, 29) : Py_NewRef(Py_None);
    if (!exp || !key) {
        Py_XDECREF(exp);
        Py_XDECREF(key);
        return NULL;
    }
    return Py_BuildValue("(nOOOOOOONNO)", pos, r->starts, r->ids, r->parents, r->kinds, r->tss, r->digests,
                         r->flagged, exp, key, r->at_turns);
}
