/* Checkpoint compaction: compact_part.
 * Part of vakaudit._native._linescan: compiled inside linescan.c's translation unit (see there). */
#include "linescan.h"

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
