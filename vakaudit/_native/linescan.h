/* Shared by every part of vakaudit._native._linescan (see linescan.c): includes, constants, types
 * and the CPU-path switches. */
#ifndef VAKAUDIT_LINESCAN_H
#define VAKAUDIT_LINESCAN_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h> /* PyMemberDef (compact_part's measures); its T_INT and T_BOOL names are reused below */
enum { MEMBER_OBJECT_EX = T_OBJECT_EX, MEMBER_READONLY = READONLY };
#undef T_INT
#undef T_BOOL
#include <stdint.h>
#include <string.h>

#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/sha.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
#endif

#define MAX_DEPTH 128 /* serde_json's default recursion limit */

#define F_BODY_DIGEST 1 /* SHA-256 of the bytes after the envelope's kind value */
#define F_MEMBERS 2     /* (key, start, end, canonical) of every payload member */

typedef const unsigned char *cp;

static int use_avx2; /* set at import when the CPU has AVX2 (x86-64 builds with GCC or Clang) */
static int surrogate_pairs; /* 1 only while jsonl_columns runs: scan_string then accepts \uD8xx\uDCxx pairs */

#endif /* VAKAUDIT_LINESCAN_H */
