/*
 * A C extension that calls fixedutf32's kernels the way a storage engine
 * would: through the header and the capsule only (tests/test_capi.py builds
 * it against the installed package).  Each function takes buffers, releases
 * the GIL around the kernel and returns the status as a tuple
 * (kind, element, position, detail).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <string.h>

#include "fixedutf32/fixedutf32.h"

static const fixedutf32_api *api;

static PyObject *status_tuple(fixedutf32_status s)
{
    return Py_BuildValue("(innL)", s.kind, (Py_ssize_t)s.element, (Py_ssize_t)s.position, (long long)s.detail);
}

/* validate(chunk, width, flags) */
static PyObject *c_validate(PyObject *self, PyObject *args)
{
    Py_buffer src;
    Py_ssize_t width;
    int flags;
    fixedutf32_status s;
    if (!PyArg_ParseTuple(args, "y*ni", &src, &width, &flags)) return NULL;
    Py_BEGIN_ALLOW_THREADS
    s = api->validate((const uint8_t *)src.buf, src.len / 4, width, flags);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&src);
    return status_tuple(s);
}

/* decode_in_place(writable chunk, width, flags) */
static PyObject *c_decode_in_place(PyObject *self, PyObject *args)
{
    Py_buffer buf;
    Py_ssize_t width;
    int flags;
    fixedutf32_status s;
    if (!PyArg_ParseTuple(args, "w*ni", &buf, &width, &flags)) return NULL;
    Py_BEGIN_ALLOW_THREADS
    s = api->decode_in_place((uint8_t *)buf.buf, buf.len / 4, width, flags);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    return status_tuple(s);
}

/* decode(chunk, width, flags) -> (status, native bytes or None): validate, then copy. */
static PyObject *c_decode(PyObject *self, PyObject *args)
{
    Py_buffer src;
    Py_ssize_t width;
    int flags;
    fixedutf32_status s;
    PyObject *out, *result;
    if (!PyArg_ParseTuple(args, "y*ni", &src, &width, &flags)) return NULL;
    out = PyBytes_FromStringAndSize(NULL, src.len);
    if (out == NULL) {
        PyBuffer_Release(&src);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    s = api->validate((const uint8_t *)src.buf, src.len / 4, width, flags & FIXEDUTF32_SRC_SWAPPED);
    if (s.kind == FIXEDUTF32_OK) {
        s = api->convert((const uint8_t *)src.buf, (uint8_t *)PyBytes_AS_STRING(out), src.len / 4, width, flags);
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&src);
    if (s.kind != FIXEDUTF32_OK) {
        Py_DECREF(out);
        out = Py_NewRef(Py_None);
    }
    result = Py_BuildValue("(NN)", status_tuple(s), out);
    return result;
}

/* to_utf8(chunk, width, flags) -> (status, UTF-8 bytes, int64 offsets as bytes) */
static PyObject *c_to_utf8(PyObject *self, PyObject *args)
{
    Py_buffer src;
    Py_ssize_t width, n, cap, out_len = 0, done = 0;
    int flags;
    fixedutf32_status s;
    uint8_t *dst;
    int64_t *offsets;
    PyObject *result;
    if (!PyArg_ParseTuple(args, "y*ni", &src, &width, &flags)) return NULL;
    if (width <= 0) {
        PyBuffer_Release(&src);
        return PyErr_Format(PyExc_ValueError, "width must be positive, got %zd", width);
    }
    n = src.len / (4 * width);
    cap = FIXEDUTF32_UTF8_CAPACITY(n, width);
    dst = malloc((size_t)cap);
    offsets = malloc(8 * (size_t)(n + 1));
    if (dst == NULL || offsets == NULL) {
        free(dst);
        free(offsets);
        PyBuffer_Release(&src);
        return PyErr_NoMemory();
    }
    Py_BEGIN_ALLOW_THREADS
    s = api->utf32_to_utf8((const uint8_t *)src.buf, n, width, flags, offsets, dst, 0, cap, &out_len, &done);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&src);
    if (s.kind == FIXEDUTF32_OK && done != n) {
        s.kind = -1; /* the capacity macro promised one call */
    }
    if (s.kind == FIXEDUTF32_OK) {
        result = Py_BuildValue("(Ny#y#)", status_tuple(s), (const char *)dst, out_len, (const char *)offsets,
                               (Py_ssize_t)(8 * (n + 1)));
    } else {
        result = Py_BuildValue("(NOO)", status_tuple(s), Py_None, Py_None);
    }
    free(dst);
    free(offsets);
    return result;
}

/* from_utf8(int64 offsets, values, width, flags) -> (status, chunk bytes or None) */
static PyObject *c_from_utf8(PyObject *self, PyObject *args)
{
    Py_buffer offsets, values;
    Py_ssize_t width, n;
    int flags;
    fixedutf32_status s;
    PyObject *out;
    if (!PyArg_ParseTuple(args, "y*y*ni", &offsets, &values, &width, &flags)) return NULL;
    n = offsets.len / 8 - 1;
    if (n < 0 || width <= 0 || width > PY_SSIZE_T_MAX / 4 / (n > 0 ? n : 1)) {
        PyBuffer_Release(&offsets);
        PyBuffer_Release(&values);
        return PyErr_Format(PyExc_ValueError, "bad offsets or width");
    }
    out = PyBytes_FromStringAndSize(NULL, 4 * n * width);
    if (out == NULL) {
        PyBuffer_Release(&offsets);
        PyBuffer_Release(&values);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    s = api->utf8_to_utf32((const int64_t *)offsets.buf, (const int64_t *)offsets.buf + 1, 1, n,
                           (const uint8_t *)values.buf, values.len, width, flags,
                           (uint8_t *)PyBytes_AS_STRING(out));
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&values);
    if (s.kind != FIXEDUTF32_OK) {
        Py_DECREF(out);
        out = Py_NewRef(Py_None);
    }
    return Py_BuildValue("(NN)", status_tuple(s), out);
}

/* bad_width(): what a width of 0 gives (no kernel runs). */
static PyObject *c_bad_width(PyObject *self, PyObject *args)
{
    static const uint8_t unit[4] = {0x41, 0, 0, 0};
    return status_tuple(api->validate(unit, 1, 0, 0));
}

static PyObject *c_simd_level(PyObject *self, PyObject *args)
{
    return PyUnicode_FromString(api->simd_level());
}

static PyMethodDef methods[] = {
    {"validate", c_validate, METH_VARARGS, NULL},
    {"decode_in_place", c_decode_in_place, METH_VARARGS, NULL},
    {"decode", c_decode, METH_VARARGS, NULL},
    {"to_utf8", c_to_utf8, METH_VARARGS, NULL},
    {"from_utf8", c_from_utf8, METH_VARARGS, NULL},
    {"bad_width", c_bad_width, METH_NOARGS, NULL},
    {"simd_level", c_simd_level, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "fu32_c_caller", NULL, -1, methods};

PyMODINIT_FUNC PyInit_fu32_c_caller(void)
{
    PyObject *m;
    api = fixedutf32_import();
    if (api == NULL) return NULL;
    m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "ABI_MAJOR", (long)api->abi_major) < 0) {
        Py_DECREF(m);
        return NULL;
    }
#ifdef Py_GIL_DISABLED
    if (m != NULL) PyUnstable_Module_SetGIL(m, Py_MOD_GIL_NOT_USED);
#endif
    return m;
}
