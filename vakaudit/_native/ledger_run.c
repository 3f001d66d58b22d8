/* Ledger runs: read_run, the verdict's chain pass and the scan's rows in one pass over the lines.
 * Part of vakaudit._native._linescan: compiled inside linescan.c's translation unit (see there). */
#include "linescan.h"

PyDoc_STRVAR(read_run_doc,
"read_run(buf, pos, end, max_lines, expected, ts_key, long_line, rows=None) -> tuple\n\n"
"verify_run's pass (without known) over buf[pos:end], returning its tuple (next_pos, starts, ids,\n"
"parents, kinds, tss, digests, flagged, expected, ts_key) and at_turns, the (index, at_turn) of the\n"
"lines taken whose envelope carries one. rows = (cols, fields, turn_state, base, line_no, known,\n"
"prep): also write each line's entries row as scan_entries does (cols an EntryCols, fields the\n"
"entry_fields dict, turn_state = [turn_no, turn_id, in_prep] updated in place, base buf[0]'s file\n"
"offset, line_no the number of the line before pos, known and prep sets of kinds); a line is then\n"
"taken only when both would take it, its SHA-256 computed once, and the chain status of its row is\n"
"checked against expected.");

static PyObject *read_run(PyObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"buf", "pos", "end", "max_lines", "expected", "ts_key", "long_line", "rows", NULL};
    Py_buffer view;
    Py_ssize_t pos, end, max_lines, long_line;
    PyObject *expected_obj, *ts_obj, *rows = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*nnnOOn|O:read_run", kwlist, &view, &pos, &end, &max_lines,
                                     &expected_obj, &ts_obj, &long_line, &rows))
        return NULL;
    PyObject *result = NULL;
    VRun r;
    memset(&r, 0, sizeof r);
    RowState st;
    memset(&st, 0, sizeof st);
    if (pos < 0 || end > view.len || pos > end || max_lines < 1) {
        PyErr_SetString(PyExc_ValueError, "read_run: bad range");
        goto done;
    }
    if (vrun_open(&r, "read_run", expected_obj, ts_obj, long_line, 1) < 0) goto done;
    cp buf = (cp)view.buf;
    if (rows == Py_None) {
        pos = vrun_lines(&r, buf, pos, end, max_lines, NULL, 0, 0);
        if (pos >= 0) result = vrun_result(&r, pos);
        goto done;
    }

    EntryCols *ec;
    PyObject *fields, *turn_state, *known, *prep;
    Py_ssize_t base, line_no;
    if (!PyTuple_Check(rows)) {
        PyErr_SetString(PyExc_TypeError, "read_run: rows must be a tuple or None");
        goto done;
    }
    if (!PyArg_ParseTuple(rows, "O!O!O!nnOO:read_run", &EntryColsType, &ec, &PyDict_Type, &fields, &PyList_Type,
                          &turn_state, &base, &line_no, &known, &prep))
        goto done;
    if (PyList_GET_SIZE(turn_state) != 3) {
        PyErr_SetString(PyExc_ValueError, "read_run: turn_state must be [turn_no, turn_id, in_prep]");
        goto done;
    }
    if (!PyAnySet_Check(known) || !PyAnySet_Check(prep)) {
        PyErr_SetString(PyExc_TypeError, "read_run: known and prep must be sets");
        goto done;
    }
    if (rows_open(&st, ec, fields, base, line_no, turn_state, 0) < 0) goto done;
    /* the rows' chain status is checked against the caller's expectation as given (scan_entries' rule,
       which compares any length), then against the previous line's digest, as r's flags are */
    const char *exp = NULL;
    Py_ssize_t exp_len = 0;
    if (expected_obj != Py_None && !(exp = PyUnicode_AsUTF8AndSize(expected_obj, &exp_len))) goto done;
    int have_exp = exp != NULL;

    cp bend = buf + end;
    LineRow lr;
    while (r.n < max_lines && buf + pos < bend) {
        cp s = buf + pos;
        cp lf = memchr(s, '\n', bend - s);
        if (!lf) break;
        Envelope env;
        if (!line_envelope(s, lf, &env)) break;
        /* A line whose members walk is strict JSON in vak's compact form, which nests at most MAX_DEPTH
           levels and starts with ',' or '}': verify_run takes it whether the next line attests it or
           not. So scan_entries' rule alone decides, and no line is looked at ahead of its turn. */
        int ok = row_facts(&env, lf, known, prep, &lr);
        if (ok < 0) goto done;
        if (!ok) break;
        char digest[64], body[64];
        row_digests(s, lf, env.kind_end, digest, body);
        const char *status = row_status(have_exp, exp, exp_len, &env);
        if (vrun_take(&r, pos, s, lf, &env, digest) < 0) goto done;
        exp = r.expected, exp_len = 64, have_exp = 1; /* this line's digest, as vrun_take expects next */
        if (row_write(&st, &lr, &env, s, lf, pos, digest, body, status) < 0) goto done;
        pos = lf + 1 - buf;
    }
    result = vrun_result(&r, pos);
    if (result && rows_close(&st, turn_state, 0) < 0) Py_CLEAR(result);
done:
    rows_release(&st);
    vrun_close(&r);
    PyBuffer_Release(&view);
    return result;
}
