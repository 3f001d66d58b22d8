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
 * read_run (vakaudit.ledger.records' kernel) reads a run of ledger lines once for the chain, the
 * timestamps and the envelopes of the lines it takes and, when asked, their rows of the entries
 * table, written straight into Arrow column buffers (EntryCols, which the reference reader's rows
 * join in file order); each line is framed, parsed and hashed once (with a row: the line and body
 * digests together, SHA extensions when the CPU has them). scan_lines exposes the line validator
 * to its tests.
 *
 * jsonl_columns applies the same validator to the JSONL sidecars (sandbox execution logs, activity
 * log, evidence and cost logs, ...): it reads a chunk of lines straight into Arrow column buffers for
 * vakaudit.artifacts._jsonl, or declines the whole chunk when any line or value is not the plain case.
 *
 * compact_part is the checkpoint reader's one-pass "compact" copy (vakaudit.artifacts._jsonstream):
 * a JSON document with its long strings replaced by placeholders and measured, piece by piece as the
 * document is read.
 *
 * The module is one translation unit: this file includes its parts, one per job (hashing, JSON
 * validation, ledger lines, ledger rows, ledger runs, JSONL columns, checkpoint compaction, 7.0
 * frames), so the small hot helpers they share (string scanning, SHA-256) stay inlinable across jobs;
 * each part includes linescan.h, which is guarded, and uses what the parts before it define.
 */
#include "linescan.h"

#include "hash.c"
#include "json.c"
#include "ledger_lines.c"
#include "ledger_rows.c"
#include "ledger_run.c"
#include "jsonl_columns.c"
#include "compact.c"
#include "frames.c"

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

static PyMethodDef methods[] = {
    {"scan_lines", scan_lines, METH_VARARGS, scan_lines_doc},
    {"read_run", (PyCFunction)(void (*)(void))read_run, METH_VARARGS | METH_KEYWORDS, read_run_doc},
    {"set_avx2", set_avx2, METH_O, set_avx2_doc},
    {"set_shani", set_shani, METH_O, set_shani_doc},
    {"simd_paths", simd_paths, METH_NOARGS, simd_paths_doc},
    {"jsonl_columns", jsonl_columns, METH_VARARGS, jsonl_columns_doc},
    {"compact_part", compact_part, METH_VARARGS, compact_part_doc},
    {"walk_frames", walk_frames, METH_VARARGS, walk_frames_doc},
    {"ts_column", ts_column, METH_VARARGS, ts_column_doc},
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
