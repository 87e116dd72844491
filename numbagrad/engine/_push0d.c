/* A scalar graph's op in one C call: Tape.push_0d() and tensor._make() together.
 *
 * push_make(tape, code, value, a, b, fat) appends the node of a 0-d float64 result of
 * elementwise op `code` on nodes `a` and `b` (-1: unary), with float attributes `fat` (a
 * tuple), to a tape its caller found plain, and returns the result's Tensor: what
 * `_make(value, tape, tape.push_0d(code, value, a, b, fat))` returns, the same records
 * included. Where this cannot write in place (values pending in the arena, a buffer full
 * or viewed) it calls that Python instead, so every error and growth is Python's.
 *
 * It writes Python objects' slots at the offsets their member descriptors give, and appends
 * to array.array buffers through CPython's array object layout (declared below, as
 * Modules/arraymodule.c has it since 3.x). setup() checks that layout on a live array and
 * refuses to work where it differs; the Python side then keeps the Python path. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <string.h>

typedef struct {
    PyObject_VAR_HEAD
    char *ob_item;
    Py_ssize_t allocated;
    const void *ob_descr;
    PyObject *weakreflist;
    Py_ssize_t ob_exports;
} ArrayObject;

#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))
#define MAX_FIELDS 32
#define MAX_FAT 8

enum { T_DATA, T_REQUIRES_GRAD, T_GRAD, T_TAPE, T_NODE, T_VC_LIST, T_BASE, T_RETAINS_GRAD,
       T_CAPTURED_BY, T_HOOKS, T_POST_HOOKS, N_TENSOR_SLOTS };
enum { P_NODES, P_ARGS, P_FAT, P_VAL, N_TAPE_SLOTS };
enum { A_N, A_CELLS, A_PENDING, N_ARENA_SLOTS };
enum { L_FIELDS, L_CODE, L_VOFF, L_SIZE, L_FLAGS, L_ARG, L_NARG, L_FAT, L_NFAT, L_BIG,
       L_FLAG_VALUE, N_LAYOUT };

static PyTypeObject *tensor_type, *tape_type, *arena_type, *array_type;
static Py_ssize_t tensor_off[N_TENSOR_SLOTS], tape_off[N_TAPE_SLOTS], arena_off[N_ARENA_SLOTS];
static long long layout[N_LAYOUT];
static PyObject *fallback;  /* the Python path: push_make's own signature */
static int ready;

static int
slot_offsets(PyTypeObject *type, PyObject *names, Py_ssize_t *out, Py_ssize_t n)
{
    if (!PyTuple_Check(names) || PyTuple_GET_SIZE(names) != n) {
        PyErr_Format(PyExc_ValueError, "setup: %zd slot names expected", n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *d = PyDict_GetItemWithError(type->tp_dict, PyTuple_GET_ITEM(names, i));
        if (d == NULL || !Py_IS_TYPE(d, &PyMemberDescr_Type) ||
                ((PyMemberDescrObject *)d)->d_member->type != T_OBJECT_EX) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_TypeError, "setup: %R is not a slot of %s",
                             PyTuple_GET_ITEM(names, i), type->tp_name);
            return -1;
        }
        out[i] = ((PyMemberDescrObject *)d)->d_member->offset;
    }
    return 0;
}

/* The layout check: a live array('q') seen through ArrayObject agrees with its buffer. */
static int
check_array_layout(PyObject *arr)
{
    Py_buffer view;
    ArrayObject *a = (ArrayObject *)arr;
    if (PyObject_GetBuffer(arr, &view, PyBUF_SIMPLE) < 0)
        return -1;
    int ok = view.buf == (void *)a->ob_item && view.len == Py_SIZE(a) * 8 &&
             a->allocated >= Py_SIZE(a) && a->ob_exports == 1;
    PyBuffer_Release(&view);
    ok = ok && a->ob_exports == 0;
    if (!ok) {
        PyErr_SetString(PyExc_RuntimeError, "setup: array.array's layout is not the one expected");
        return -1;
    }
    return 0;
}

static PyObject *
setup(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *tensor_names, *tape_names, *arena_names, *lay, *probe, *python;
    PyTypeObject *tt, *pt, *at;
    ready = 0;  /* until this setup succeeds: push_make calls the Python pair meanwhile */
    if (!PyArg_ParseTuple(args, "O!OO!OO!OOOO", &PyType_Type, &tt, &tensor_names,
                          &PyType_Type, &pt, &tape_names, &PyType_Type, &at, &arena_names,
                          &lay, &probe, &python))
        return NULL;
    if (!PyCallable_Check(python))
        return PyErr_Format(PyExc_TypeError, "setup: the fallback must be callable");
    if (slot_offsets(tt, tensor_names, tensor_off, N_TENSOR_SLOTS) < 0 ||
            slot_offsets(pt, tape_names, tape_off, N_TAPE_SLOTS) < 0 ||
            slot_offsets(at, arena_names, arena_off, N_ARENA_SLOTS) < 0 ||
            check_array_layout(probe) < 0)
        return NULL;
    if (!PyTuple_Check(lay) || PyTuple_GET_SIZE(lay) != N_LAYOUT) {
        PyErr_SetString(PyExc_ValueError, "setup: the record layout has the wrong length");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < N_LAYOUT; i++) {
        layout[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(lay, i));
        if (layout[i] == -1 && PyErr_Occurred())
            return NULL;
        if (i > L_FIELDS && i < L_FLAG_VALUE && (layout[i] < 0 || layout[i] >= layout[L_FIELDS]))
            return PyErr_Format(PyExc_ValueError, "setup: field %zd out of the record", i);
    }
    if (layout[L_FIELDS] <= 0 || layout[L_FIELDS] > MAX_FIELDS)
        return PyErr_Format(PyExc_ValueError, "setup: %lld fields", layout[L_FIELDS]);
    Py_XSETREF(fallback, Py_NewRef(python));
    tensor_type = tt;
    tape_type = pt;
    arena_type = at;
    array_type = Py_TYPE(probe);
    Py_INCREF(tt);  /* held for good: the module lives as long as the interpreter */
    Py_INCREF(pt);
    Py_INCREF(at);
    Py_INCREF(array_type);
    ready = 1;
    Py_RETURN_NONE;
}

static inline void
set_slot(PyObject *obj, Py_ssize_t off, PyObject *value)
{
    PyObject *old = SLOT(obj, off);
    Py_INCREF(value);
    SLOT(obj, off) = value;
    Py_XDECREF(old);
}

static inline int
room(PyObject *arr, Py_ssize_t n)
{
    ArrayObject *a = (ArrayObject *)arr;
    return arr != NULL && Py_IS_TYPE(arr, array_type) && a->ob_exports == 0 &&
           Py_SIZE(a) + n <= a->allocated;
}

static PyObject *
push_make(PyObject *Py_UNUSED(self), PyObject *const *argv, Py_ssize_t nargs)
{
    if (nargs != 6)
        return PyErr_Format(PyExc_TypeError, "push_make() takes 6 arguments (%zd given)", nargs);
    PyObject *tape = argv[0], *value = argv[2], *fat = argv[5];
    if (fallback == NULL)
        return PyErr_Format(PyExc_RuntimeError, "push_make() before setup()");
    if (!ready || !Py_IS_TYPE(tape, tape_type) || !PyTuple_Check(fat) ||
            PyTuple_GET_SIZE(fat) > MAX_FAT)
        return PyObject_Vectorcall(fallback, argv, nargs, NULL);
    long long code = PyLong_AsLongLong(argv[1]);
    long long a = PyLong_AsLongLong(argv[3]);
    long long b = PyLong_AsLongLong(argv[4]);
    double x = PyFloat_Check(value) ? PyFloat_AS_DOUBLE(value) : PyFloat_AsDouble(value);
    Py_ssize_t nfat = PyTuple_GET_SIZE(fat);
    double fats[MAX_FAT];
    for (Py_ssize_t i = 0; i < nfat; i++)
        fats[i] = PyFloat_AsDouble(PyTuple_GET_ITEM(fat, i));
    if (PyErr_Occurred())
        return NULL;
    /* every allocation before the tape is read: a collection it starts may run Python */
    PyObject *t = tensor_type->tp_alloc(tensor_type, 0);
    if (t == NULL)
        return NULL;
    PyObject *nodes = SLOT(tape, tape_off[P_NODES]), *args = SLOT(tape, tape_off[P_ARGS]);
    PyObject *fat_arr = SLOT(tape, tape_off[P_FAT]), *val = SLOT(tape, tape_off[P_VAL]);
    long long fields = layout[L_FIELDS];
    if (!room(nodes, fields) || (nfat && !room(fat_arr, nfat)) || args == NULL ||
            !PyByteArray_CheckExact(args) || ((PyByteArrayObject *)args)->ob_exports ||
            val == NULL || !Py_IS_TYPE(val, arena_type))
        goto python;
    PyObject *pending = SLOT(val, arena_off[A_PENDING]), *cells = SLOT(val, arena_off[A_CELLS]);
    PyObject *n_obj = SLOT(val, arena_off[A_N]);
    if (pending == NULL || !PyList_CheckExact(pending) || PyList_GET_SIZE(pending) ||
            cells == NULL || !PyMemoryView_Check(cells) || n_obj == NULL || !PyLong_CheckExact(n_obj))
        goto python;
    Py_buffer *cb = PyMemoryView_GET_BUFFER(cells);
    Py_ssize_t voff = PyLong_AsSsize_t(n_obj);
    if (voff < 0 || cb->readonly || cb->itemsize != 8 || voff >= cb->len / 8)
        goto python;
    Py_ssize_t nbytes = PyByteArray_GET_SIZE(args);
    Py_ssize_t node = Py_SIZE(nodes) / fields;
    PyObject *node_obj = PyLong_FromSsize_t(node);
    PyObject *n_next = PyLong_FromSsize_t(voff + 1);
    if (node_obj == NULL || n_next == NULL || PyByteArray_Resize(args, nbytes + (b < 0 ? 8 : 16)) < 0) {
        Py_XDECREF(node_obj);
        Py_XDECREF(n_next);
        Py_DECREF(t);
        return NULL;
    }
    /* nothing fails from here: the value, the attributes, the arguments, the record last */
    ((double *)cb->buf)[voff] = x;
    set_slot(val, arena_off[A_N], n_next);
    Py_DECREF(n_next);
    long long fat_ptr = 0;
    if (nfat) {
        ArrayObject *fa = (ArrayObject *)fat_arr;
        fat_ptr = Py_SIZE(fa);
        memcpy(fa->ob_item + fat_ptr * 8, fats, nfat * 8);
        Py_SET_SIZE(fa, fat_ptr + nfat);
    }
    long long *arg_out = (long long *)(PyByteArray_AS_STRING(args) + nbytes);
    arg_out[0] = a;
    if (b >= 0)
        arg_out[1] = b;
    ArrayObject *na = (ArrayObject *)nodes;
    long long *rec = (long long *)na->ob_item + Py_SIZE(na);
    memset(rec, 0, fields * 8);
    rec[layout[L_CODE]] = code;
    rec[layout[L_VOFF]] = voff;
    rec[layout[L_SIZE]] = 1;
    rec[layout[L_FLAGS]] = layout[L_FLAG_VALUE];
    rec[layout[L_ARG]] = nbytes >> 3;
    rec[layout[L_NARG]] = b < 0 ? 1 : 2;
    rec[layout[L_FAT]] = fat_ptr;
    rec[layout[L_NFAT]] = nfat;
    rec[layout[L_BIG]] = -1;
    Py_SET_SIZE(na, Py_SIZE(na) + fields);
    /* the Tensor, as _make() makes it */
    SLOT(t, tensor_off[T_DATA]) = Py_NewRef(value);
    SLOT(t, tensor_off[T_REQUIRES_GRAD]) = Py_NewRef(Py_True);
    SLOT(t, tensor_off[T_GRAD]) = Py_NewRef(Py_None);
    SLOT(t, tensor_off[T_TAPE]) = Py_NewRef(tape);
    SLOT(t, tensor_off[T_NODE]) = node_obj;
    SLOT(t, tensor_off[T_VC_LIST]) = Py_NewRef(Py_None);
    SLOT(t, tensor_off[T_BASE]) = Py_NewRef(Py_None);
    SLOT(t, tensor_off[T_RETAINS_GRAD]) = Py_NewRef(Py_False);
    SLOT(t, tensor_off[T_CAPTURED_BY]) = Py_NewRef(Py_None);
    SLOT(t, tensor_off[T_HOOKS]) = Py_NewRef(Py_None);
    SLOT(t, tensor_off[T_POST_HOOKS]) = Py_NewRef(Py_None);
    return t;
python:
    Py_DECREF(t);
    return PyObject_Vectorcall(fallback, argv, nargs, NULL);
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS,
     "setup(Tensor, its slots, Tape, its slots, Arena, its slots, record layout, "
     "array('q') probe, fallback)"},
    {"push_make", (PyCFunction)(void (*)(void))push_make, METH_FASTCALL,
     "push_make(tape, code, value, a, b, fat) -> Tensor"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_push0d", NULL, -1, methods,
                                     NULL, NULL, NULL, NULL};

PyMODINIT_FUNC
PyInit__push0d(void)
{
    return PyModule_Create(&module);
}
