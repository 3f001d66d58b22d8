/* Ledger runs: read_run, the verdict's chain pass and the scan's rows in one pass over the lines.
 * Part of vakaudit._native._linescan: compiled inside linescan.c's translation unit (see there). */
#include "linescan.h"

PyDoc_STRVAR(read_run_doc,
"read_run(buf, pos, end, max_lines, expected, ts_key, long_line, rows=None) -> tuple\n\n"
"Read consecutive complete lines of buf[pos:end], at most max_lines, while each is a plain entry:\n"
"vak's envelope and either (a) attested by the next line's prev_hash and nested at most 128 levels,\n"
"or (b) strict JSON in vak's compact form. Stops before the first other line (the caller reads it;\n"
"nothing of it is recorded). expected is the digest the first line's prev_hash should be (None:\n"
"unchecked); ts_key the previous entry's 29-byte timestamp key (None: none). Returns (next_pos,\n"
"starts, ids, parents, kinds, tss, digests, flagged, expected, ts_key, at_turns): one list per column\n"
"of the lines taken; flagged the (index, bits, prev_hash) of the lines with bits V_BROKEN=1 (prev_hash\n"
"is not the expected digest), V_UNCHAINED=2 (no prev_hash although one was expected), V_TS_BACK=4\n"
"(timestamp before the previous entry's), V_LONG=8 (longer than long_line bytes), V_PARENT=16\n"
"(parent_id is not the previous line's id, or is its own: the caller checks); expected and ts_key\n"
"those of the last line taken (as given when none is); at_turns the (index, at_turn) of the lines\n"
"whose envelope carries one.\n\n"
"rows = (cols, fields, turn_state, base, line_no, known, vocab): also write each line's entries row\n"
"into the EntryCols cols and count its members into fields ({(kind, field): [count, bytes]});\n"
"turn_state = [turn_no, turn_id, in_prep] is updated in place (vakaudit.ledger.vocab.turn_step);\n"
"base is buf[0]'s file offset, line_no the number of the line before pos, known the set of known\n"
"kinds, vocab the turn vocabulary (vakaudit.ledger.vocab.KERNEL_VOCAB: the prep kinds, the header's\n"
"kind, the prep follower's, the directive's kind, role, text and result block types). A line is\n"
"then taken only when it is (b), its kind\n"
"is in known and not 'work', and no column of its row needs the reference decoder; its row's\n"
"chain_status follows from its flags. Which finding a flagged line is, vakaudit.ledger decides.");

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
    if (vrun_open(&r, "read_run", expected_obj, ts_obj, long_line) < 0) goto done;
    cp buf = (cp)view.buf;
    if (rows == Py_None) {
        pos = vrun_lines(&r, buf, pos, end, max_lines);
        if (pos >= 0) result = vrun_result(&r, pos);
        goto done;
    }

    EntryCols *ec;
    PyObject *fields, *turn_state, *known, *vocab;
    Py_ssize_t base, line_no;
    if (!PyTuple_Check(rows)) {
        PyErr_SetString(PyExc_TypeError, "read_run: rows must be a tuple or None");
        goto done;
    }
    if (!PyArg_ParseTuple(rows, "O!O!O!nnOO:read_run", &EntryColsType, &ec, &PyDict_Type, &fields, &PyList_Type,
                          &turn_state, &base, &line_no, &known, &vocab))
        goto done;
    if (PyList_GET_SIZE(turn_state) != 3) {
        PyErr_SetString(PyExc_ValueError, "read_run: turn_state must be [turn_no, turn_id, in_prep]");
        goto done;
    }
    if (!PyAnySet_Check(known)) {
        PyErr_SetString(PyExc_TypeError, "read_run: known must be a set");
        goto done;
    }
    Vocab voc;
    if (vocab_open(&voc, vocab) < 0) goto done;
    if (rows_open(&st, ec, fields, &voc, base, line_no, turn_state) < 0) goto done;
    cp bend = buf + end;
    LineRow lr;
    while (r.n < max_lines && buf + pos < bend) {
        cp s = buf + pos;
        cp lf = memchr(s, '\n', bend - s);
        if (!lf) break;
        Envelope env;
        if (!line_envelope(s, lf, &env)) break;
        /* with rows a line is taken on (b) alone (row_facts walks its members), attested or not: no
           line is looked at ahead of its turn */
        int ok = row_facts(&env, lf, known, &voc, &lr);
        if (ok < 0) goto done;
        if (!ok) break;
        char digest[64], body[64];
        row_digests(s, lf, env.kind_end, digest, body);
        int checked = r.exp != NULL;
        int bits = vrun_take(&r, pos, s, lf, &env, digest);
        if (bits < 0) goto done;
        if (row_write(&st, &lr, &env, s, lf, pos, digest, body, row_status(checked, bits)) < 0) goto done;
        pos = lf + 1 - buf;
    }
    result = vrun_result(&r, pos);
    if (result && rows_close(&st, turn_state) < 0) Py_CLEAR(result);
done:
    rows_release(&st);
    vrun_close(&r);
    PyBuffer_Release(&view);
    return result;
}
