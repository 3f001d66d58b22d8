/* Ledger rows: entries column buffers (EntryCols) and a line's row (row_facts, row_write), which
 * read_run writes.
 * Part of vakaudit._native._linescan: compiled inside linescan.c's translation unit (see there). */
#include "linescan.h"

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
 * int64 values, bool bitmaps, int32 offsets and UTF-8 data). read_run writes the rows of plain lines
 * into it and append_row those of the reference reader, in file order.
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

/*
 * ts_micros of a timestamp in vak's form or in that form with a +hh:mm / -hh:mm offset instead of the
 * Z (hh 00-23, mm 00-59), as vak's other writers put it (chrono's to_rfc3339: "+00:00"); 0 when the
 * instant falls outside the years 1-9999.
 */
static int ts_micros_zoned(const char *s, Py_ssize_t n, long long *out) {
    if (n > 0 && s[n - 1] == 'Z') return ts_micros(s, n, out);
    if (n < 25 || n > 35 || (s[n - 6] != '+' && s[n - 6] != '-') || s[n - 3] != ':') return 0;
    const char *z = s + n - 5;
    if (!is_digit((unsigned char)z[0]) || !is_digit((unsigned char)z[1]) || !is_digit((unsigned char)z[3]) ||
        !is_digit((unsigned char)z[4]))
        return 0;
    int oh = (z[0] - '0') * 10 + (z[1] - '0'), om = (z[3] - '0') * 10 + (z[4] - '0');
    if (oh > 23 || om > 59) return 0;
    char body[32];
    memcpy(body, s, (size_t)(n - 6));
    body[n - 6] = 'Z';
    long long us;
    if (!ts_micros(body, n - 5, &us)) return 0;
    long long shift = (oh * 3600LL + om * 60LL) * 1000000LL;
    us = s[n - 6] == '+' ? us - shift : us + shift;
    if (us < -62135596800000000LL || us > 253402300799999999LL) return 0; /* 0001-01-01 .. 9999-12-31 */
    *out = us;
    return 1;
}

PyDoc_STRVAR(ts_column_doc,
"ts_column(offsets, data, validity, offset, length) -> bytes | None\n\n"
"ts_at of an Arrow string column, from its buffers (int32 offsets, UTF-8 data, validity bitmap or None)\n"
"and its offset and length: (offset + length) little-endian int64 microseconds, index i for row\n"
"i - offset (0 before offset and on null rows), or None when a non-null value is not a timestamp in\n"
"vak's form, Z or an offset (the caller then converts the column itself).");

static PyObject *ts_column(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer offs, data, valid;
    PyObject *valid_obj, *out = NULL;
    Py_ssize_t offset, length;
    if (!PyArg_ParseTuple(args, "y*y*Onn:ts_column", &offs, &data, &valid_obj, &offset, &length)) return NULL;
    int have_valid = valid_obj != Py_None;
    if (have_valid && PyObject_GetBuffer(valid_obj, &valid, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&offs);
        PyBuffer_Release(&data);
        return NULL;
    }
    if (offset < 0 || length < 0 || offs.len / 4 < offset + length + 1 ||
        (have_valid && valid.len < (offset + length + 7) / 8)) {
        PyErr_SetString(PyExc_ValueError, "ts_column: buffers shorter than offset + length");
        goto done;
    }
    out = PyBytes_FromStringAndSize(NULL, (offset + length) * 8);
    if (!out) goto done;
    char *dst = PyBytes_AS_STRING(out);
    memset(dst, 0, (size_t)offset * 8);
    const char *o = (const char *)offs.buf, *d = (const char *)data.buf;
    const unsigned char *vb = have_valid ? (const unsigned char *)valid.buf : NULL;
    int ok = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t j = offset; j < offset + length; j++) {
        long long us = 0;
        if (!vb || (vb[j >> 3] >> (j & 7)) & 1) {
            int32_t a, b;
            memcpy(&a, o + j * 4, 4);
            memcpy(&b, o + (j + 1) * 4, 4);
            if (a < 0 || b < a || b > data.len || !ts_micros_zoned(d + a, b - a, &us)) {
                ok = 0;
                break;
            }
        }
        memcpy(dst + j * 8, &us, 8);
    }
    Py_END_ALLOW_THREADS
    if (!ok) {
        Py_DECREF(out);
        out = Py_NewRef(Py_None);
    }
done:
    PyBuffer_Release(&offs);
    PyBuffer_Release(&data);
    if (have_valid) PyBuffer_Release(&valid);
    return out;
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
            /* an empty string copies nothing: the column's data buffer may not exist yet (NULL) */
            if (x->t == E_RAW && x->n > 0) {
                memcpy(c->data.p + c->data.len, x->s, x->n);
                c->data.len += x->n;
            } else if (x->t == E_JSON && x->n > 2) {
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

PyDoc_STRVAR(ec_digests_doc,
"digests(start) -> bytes: the line_sha256 of rows start.. (64 hex digits each, in a row); empty when\n"
"one of them has none.");

static PyObject *ec_digests(EntryCols *ec, PyObject *arg) {
    Py_ssize_t start = PyLong_AsSsize_t(arg);
    if (start == -1 && PyErr_Occurred()) return NULL;
    if (start < 0 || start > ec->n) {
        PyErr_SetString(PyExc_ValueError, "digests: start out of range");
        return NULL;
    }
    if (start == ec->n) return PyBytes_FromStringAndSize(NULL, 0);
    ECol *c = &ec->c[C_DIGEST];
    int32_t o0, o1;
    memcpy(&o0, c->offs.p + 4 * start, 4);
    memcpy(&o1, c->offs.p + 4 * ec->n, 4);
    if ((Py_ssize_t)o1 - o0 != 64 * (ec->n - start)) return PyBytes_FromStringAndSize(NULL, 0); /* a null */
    return PyBytes_FromStringAndSize((const char *)c->data.p + o0, o1 - o0);
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
    {"digests", (PyCFunction)ec_digests, METH_O, ec_digests_doc},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods ec_as_sequence = {.sq_length = (lenfunc)ec_len};

static PyTypeObject EntryColsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "vakaudit._native._linescan.EntryCols",
    .tp_basicsize = sizeof(EntryCols),
    .tp_dealloc = (destructor)ec_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = PyDoc_STR("EntryCols(): entries rows as Arrow column buffers (see read_run, append_row, take)"),
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

/* -- one line's row ------------------------------------------------------------------------------- */

/* The turn vocabulary, handed in as data on every call (vakaudit.ledger.vocab.KERNEL_VOCAB): the prep
 * kinds, the header's kind, the kind an entry after a prep entry is prep too, and the directive rule's
 * kind, role and content block types. The strings belong to the caller's tuple for the call. */
typedef struct {
    PyObject *prep;
    const char *header, *follower, *message, *role, *text, *result;
} Vocab;

static int vocab_open(Vocab *voc, PyObject *t) {
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 7 || !PyAnySet_Check(PyTuple_GET_ITEM(t, 0))) {
        PyErr_SetString(PyExc_TypeError, "read_run: vocab must be (prep kinds, header, follower, message, role, "
                                         "text block, result block)");
        return -1;
    }
    voc->prep = PyTuple_GET_ITEM(t, 0);
    const char **to[] = {&voc->header, &voc->follower, &voc->message, &voc->role, &voc->text, &voc->result};
    for (int i = 0; i < 6; i++)
        if (!(*to[i] = PyUnicode_AsUTF8(PyTuple_GET_ITEM(t, i + 1)))) return -1;
    return 0;
}

/* Whether the JSON string [s, e) (quotes included, no escape) is lit. */
static int jquoted_is(cp s, cp e, const char *lit) {
    size_t n = strlen(lit);
    return (size_t)(e - s) == n + 2 && *s == '"' && memcmp(s + 1, lit, n) == 0;
}

/* A line's row before it is written: its payload members and the column values of its payload facts. */
typedef struct {
    Member mem[MAX_MEMBERS];
    int nm;
    int is_prep;       /* its kind is a prep kind */
    int has_directive; /* a message: is_directive is set (to directive) */
    int directive;
    char sp_hex[64]; /* the system prompt's SHA-256 (v[C_SP_SHA] points here) */
    EVal v[N_ECOLS];
} LineRow;

/*
 * Whether read_run writes the row of the line ending at e (no LF) whose envelope is env: its payload
 * members walk (walk_members), its kind is in known and not 'work', and no payload fact needs the
 * reference decoder; the facts (session_ledger.payload_facts) then fill r. Returns 1 when the row can
 * be written, 0 when the caller must read the line itself (nothing recorded), -1 on a Python error.
 */
static int row_facts(const Envelope *env, cp e, PyObject *known, const Vocab *voc, LineRow *r) {
    int nm = r->nm = walk_members(env->kind_end, e, r->mem);
    if (nm < 0) return 0;
    PyObject *kind = kind_str(env->kind_s, env->kind_t);
    if (!kind) return -1;
    int is_known = PySet_Contains(known, kind);
    int is_prep = is_known > 0 ? PySet_Contains(voc->prep, kind) : 0;
    Py_DECREF(kind); /* the kind cache holds it */
    if (is_known < 0 || is_prep < 0) return -1;
    if (!is_known || key_is(env->kind_s, env->kind_t, "work")) return 0;
    r->is_prep = is_prep;
    EVal *v = r->v;
    const Member *mem = r->mem;
    char *sp_hex = r->sp_hex;
    memset(r->v, 0, sizeof r->v);
    int defer = 0;
    int directive = 0, has_directive = 0;
    cp k0 = env->kind_s, k1 = env->kind_t;
    /* payload facts (session_ledger.payload_facts) */
    if (key_is(k0, k1, voc->message)) {
        const Member *meta = member(mem, nm, "meta"), *msg = member(mem, nm, "message");
        Span f[4];
        int got[4];
        if (meta && *meta->vs == '{') {
            static const char *const META[] = {"control", "model", "stop_reason", "usage"};
            if (!find_keys(meta->vs, meta->me, META, 4, f, got)) defer = 1;
            else {
                /* a control that is not a string (nor null) is still a control: its column holds
                   it as JSON, which the reference path writes */
                if (got[0] && *f[0].s != '"' && *f[0].s != 'n') defer = 1;
                else if (got[0]) jstr(f[0].s, f[0].e, &v[C_CONTROL]);
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
                            } else if (jquoted_is(t.s, t.e, voc->result)) {
                                trc++;
                                Span tc = bf[1];
                                if (bgot[1]) {
                                    if (*tc.s == '"') trb += decoded_len(tc.s, tc.e);
                                    else if (!(tc.e - tc.s == 4 && memcmp(tc.s, "null", 4) == 0))
                                        defer = 1; /* its re-encoded length: the reference path */
                                }
                            } else if (jquoted_is(t.s, t.e, voc->text)) {
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
        directive = v[C_CONTROL].t == E_NULL && has_text && trc == 0 && jstr_is(&v[C_ROLE], voc->role);
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
    } else if (key_is(k0, k1, voc->header)) {
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
    r->directive = directive, r->has_directive = has_directive;
    return !defer;
}

/* The SHA-256 of the line [s, e) and of its body [kind_end, e) in hex, computed together. */
static void row_digests(cp s, cp e, cp kind_end, char digest[64], char body[64]) {
    unsigned char md_line[32], md_body[32];
    sha256_pair(s, e - s, kind_end, e - kind_end, md_line, md_body);
    hex_of(md_line, digest);
    hex_of(md_body, body);
}

/* A row's chain status from its line's flags (vrun_take, ChainVerifier.link's rule); checked: the
 * line had an expectation to meet. */
static const char *row_status(int checked, int bits) {
    if (!checked) return STATUS_UNCHECKED;
    if (bits & V_UNCHAINED) return STATUS_UNCHAINED;
    return bits & V_BROKEN ? STATUS_BROKEN : STATUS_OK;
}

/* Where the rows of one call go, and the turn numbering and entry_fields sums carried from line to line. */
typedef struct {
    EntryCols *ec;
    PyObject *fields;
    const Vocab *voc;
    Py_ssize_t base;    /* buf[0]'s file offset */
    Py_ssize_t line_no; /* the last line number written */
    Py_ssize_t turn_no;
    PyObject *turn_id; /* a strong reference */
    int in_prep;
    Acc acc[ACC_SLOTS];
    int acc_used;
} RowState;

/* Start from the caller's turn state, state = [turn_no, turn_id, in_prep]; st was zeroed.
 * 0, or -1 with an error set (rows_release releases what was taken). */
static int rows_open(RowState *st, EntryCols *ec, PyObject *fields, const Vocab *voc, Py_ssize_t base,
                     Py_ssize_t line_no, PyObject *state) {
    st->ec = ec, st->fields = fields, st->voc = voc, st->base = base, st->line_no = line_no;
    st->turn_no = PyLong_AsSsize_t(PyList_GET_ITEM(state, 0));
    st->turn_id = Py_NewRef(PyList_GET_ITEM(state, 1));
    st->in_prep = PyObject_IsTrue(PyList_GET_ITEM(state, 2));
    return (st->turn_no == -1 && PyErr_Occurred()) || st->in_prep < 0 ? -1 : 0;
}

/* Hand the entry_fields sums to the fields dict and the turn state back to state. */
static int rows_close(RowState *st, PyObject *state) {
    if (acc_flush(st->acc, st->fields) < 0) return -1;
    PyObject *t = PyLong_FromSsize_t(st->turn_no);
    if (!t || PyList_SetItem(state, 0, t) < 0) return -1;
    PyObject *turn_id = st->turn_id;
    st->turn_id = NULL;
    if (PyList_SetItem(state, 1, turn_id) < 0) return -1; /* steals turn_id */
    return PyList_SetItem(state, 2, PyBool_FromLong(st->in_prep));
}

static void rows_release(RowState *st) {
    for (int i = 0; i < ACC_SLOTS; i++) Py_CLEAR(st->acc[i].kind); /* after an error: sums not handed over */
    Py_CLEAR(st->turn_id);
}

/*
 * Write the row of a line row_facts took ([s, lf) the line, pos its index in the buffer, digest and
 * body its SHA-256 pair, status its chain status), step the turn (vakaudit.ledger.vocab.turn_step)
 * and add its members to the entry_fields sums. 0, or -1 on a Python error.
 */
static int row_write(RowState *st, LineRow *r, const Envelope *env, cp s, cp lf, Py_ssize_t pos, const char *digest,
                     const char *body, const char *status) {
    EVal *v = r->v;
    cp k0 = env->kind_s, k1 = env->kind_t;
    st->line_no++;
    /* the turn (vakaudit.ledger.vocab.turn_step) */
    int row_turn_no_set = 1;
    Py_ssize_t row_turn_no = 0;
    int row_turn_id_from_state = 0;
    if (r->has_directive && r->directive) {
        st->turn_no++;
        PyObject *ident = ascii_str(env->id_s, env->id_t);
        if (!ident) return -1;
        Py_SETREF(st->turn_id, ident);
        st->in_prep = 0;
        row_turn_no = st->turn_no, row_turn_id_from_state = 1;
    } else if (r->is_prep || (key_is(k0, k1, st->voc->follower) && st->in_prep)) {
        st->in_prep = 1;
        row_turn_no = st->turn_no + 1;
    } else if (key_is(k0, k1, st->voc->header)) {
        row_turn_no_set = 0;
    } else {
        st->in_prep = 0;
        row_turn_no_set = st->turn_no != 0;
        row_turn_no = st->turn_no, row_turn_id_from_state = 1;
    }
    if (row_turn_no_set) v[C_TURN_NO].t = E_INT, v[C_TURN_NO].i = row_turn_no;
    if (env->at_s) {
        v[C_TURN_ID].t = E_RAW, v[C_TURN_ID].s = (const char *)env->at_s, v[C_TURN_ID].n = env->at_t - env->at_s;
    } else if (row_turn_id_from_state && st->turn_id != Py_None) {
        Py_ssize_t tn;
        const char *t = PyUnicode_AsUTF8AndSize(st->turn_id, &tn);
        if (!t) return -1;
        v[C_TURN_ID].t = E_RAW, v[C_TURN_ID].s = t, v[C_TURN_ID].n = tn;
    }
    Py_ssize_t size = lf + 1 - s;
#define RAW(col, a, b) (v[col].t = E_RAW, v[col].s = (const char *)(a), v[col].n = (b) - (a))
    v[C_OFFSET].t = v[C_LINE].t = v[C_SIZE].t = E_INT;
    v[C_OFFSET].i = st->base + pos, v[C_LINE].i = st->line_no, v[C_SIZE].i = size;
    RAW(C_KIND, k0, k1);
    RAW(C_ID, env->id_s, env->id_t);
    if (env->par_s) RAW(C_PARENT, env->par_s, env->par_t);
    RAW(C_TS, env->ts_s, env->ts_t);
    if (env->prev_s) RAW(C_PREV, env->prev_s, env->prev_t);
    RAW(C_DIGEST, digest, digest + 64);
    RAW(C_STATUS, status, status + strlen(status));
    RAW(C_BODY, body, body + 64);
#undef RAW
    if (r->has_directive) v[C_DIRECTIVE].t = E_INT, v[C_DIRECTIVE].i = r->directive;
    ec_ts_at(st->ec, v);
    if (status == STATUS_OK || status == STATUS_BROKEN)
        v[C_CHAIN_OK].t = E_INT, v[C_CHAIN_OK].i = status == STATUS_OK;
    /* entry_fields */
    PyObject *kobj = kind_str(k0, k1);
    if (!kobj) return -1;
    Py_ssize_t used = 0;
    int failed = 0;
    for (int i = 0; i < r->nm && !failed; i++) {
        const Member *m = &r->mem[i];
        if (acc_add(st->acc, &st->acc_used, st->fields, kobj, m->ks, m->kt - m->ks, m->me - m->ms) < 0) failed = 1;
        used += m->me - m->ms;
    }
    if (!failed && acc_add(st->acc, &st->acc_used, st->fields, kobj, NULL, 0, size - used) < 0) failed = 1;
    Py_DECREF(kobj);
    if (failed || ec_append(st->ec, v) < 0) return -1;
    return 0;
}
