/* JSONL columns: jsonl_columns, a sidecar chunk straight into Arrow column buffers.
 * Part of vakaudit._native._linescan: compiled inside linescan.c's translation unit (see there). */
#include "linescan.h"

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
