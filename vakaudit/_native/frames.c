/* 7.0 frames: walk_frames, the clean prefix of a record chain.
 * Part of vakaudit._native._linescan: compiled inside linescan.c's translation unit (see there). */
#include "linescan.h"

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
    cp d = (cp)data.buf;
    size_t n = (size_t)data.len, off = (size_t)start;
    unsigned char prev[32], md[32];
    memcpy(prev, prevb.buf, 32);
    /* the walk hashes without the GIL (other threads walk other chains meanwhile); the frames'
       facts are kept as offsets and turned into Python objects once it is done */
    size_t count = 0, cap = 0, *offs = NULL;
    int nomem = 0;
    Py_BEGIN_ALLOW_THREADS
    while (n - off >= 4) {
        uint32_t len = (uint32_t)d[off] | (uint32_t)d[off + 1] << 8 | (uint32_t)d[off + 2] << 16 |
                       (uint32_t)d[off + 3] << 24;
        if (len == 0 || (Py_ssize_t)len > max_frame) break;
        size_t size = 4 + (size_t)len + 32;
        if (n - off < size) break;
        link_hash(prev, d + off, 4 + (size_t)len, md);
        cp stored = d + off + 4 + len;
        if (memcmp(md, stored, 32) != 0) break;
        if (count == cap) {
            size_t ncap = cap ? cap * 2 : 256;
            size_t *grown = PyMem_RawRealloc(offs, ncap * sizeof *offs);
            if (!grown) { nomem = 1; break; }
            offs = grown;
            cap = ncap;
        }
        offs[count++] = off;
        memcpy(prev, stored, 32);
        off += size;
    }
    Py_END_ALLOW_THREADS
    if (nomem) {
        PyErr_NoMemory();
        goto done_offs;
    }
    frames = PyList_New((Py_ssize_t)count);
    if (!frames) goto done_offs;
    for (size_t i = 0; i < count; i++) {
        size_t o = offs[i];
        uint32_t len = (uint32_t)d[o] | (uint32_t)d[o + 1] << 8 | (uint32_t)d[o + 2] << 16 |
                       (uint32_t)d[o + 3] << 24;
        PyObject *t = Py_BuildValue("(nkiy#)", (Py_ssize_t)o, (unsigned long)len, (int)d[o + 4],
                                    (const char *)(d + o + 4 + len), (Py_ssize_t)32);
        if (!t) {
            Py_CLEAR(frames);
            goto done_offs;
        }
        PyList_SET_ITEM(frames, (Py_ssize_t)i, t);
    }
    out = Py_BuildValue("(Nn)", frames, (Py_ssize_t)off);
    frames = NULL;
done_offs:
    PyMem_RawFree(offs);
done:
    Py_XDECREF(frames);
    PyBuffer_Release(&data);
    PyBuffer_Release(&prevb);
    return out;
}
