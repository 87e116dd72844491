/* An op's node pushed on the tape and its Tensor made, in one C call: the Python pairs
 * `_make(value, tape, tape.push_0d(...))` and `tape.push_array(...)` + `_make`, the common
 * path of every scalar and small array op (engine/fast_push.py).
 *
 * push_make(tape, code, value, a, b, fat): a 0-d float64 result of elementwise op `code`
 * on nodes `a` and `b` (-1: unary), float attributes `fat` (a tuple), on a tape its caller
 * found plain.
 * push_array_make(tape, code, value, a, b, iat, fat, f32, reads): an array result, as
 * Tape.push_array takes it; None where push() is needed (nothing pushed).
 *
 * push_big(tape, code, value, size, shape, args, iat, fat, flags): Tape.push() of a big node
 * (flags hold FLAG_BIG: the value kept as it is, in tape.big_val), returning its node; None
 * where push() is needed (nothing pushed).
 *
 * source_big(tape, t, with_big): Tape.source() of a tensor new to the tape that becomes a big
 * node (a training step's parameters on each step's new tape), returning its node; None
 * where source() is needed (nothing pushed).
 *
 * They write the records the Python code writes, and call those pairs for every other case
 * (a flush due, a buffer full or viewed, a big operand), so every error, growth and flush is
 * Python's. They write Python objects' slots at the offsets their member descriptors give,
 * and append to array.array buffers through CPython's array object layout (declared below
 * as Modules/arraymodule.c has it); setup() checks that layout on a live array and refuses
 * to work where it differs, and the Python side then keeps the Python pairs. */
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
#define MAX_ATTRS 16
#define MAX_DIMS 32

enum { T_DATA, T_REQUIRES_GRAD, T_GRAD, T_TAPE, T_NODE, T_VC_LIST, T_BASE, T_RETAINS_GRAD,
       T_CAPTURED_BY, T_HOOKS, T_POST_HOOKS, N_TENSOR_SLOTS };
enum { P_NODES, P_ARGS, P_SHAPES, P_IAT, P_FAT, P_VAL, P_BIG, P_HAS_BIG, P_KEEP_ALL,
       P_UNWRITTEN_NODES, P_HAS_UNWRITTEN, P_BIG_VAL, P_PLAIN, P_SOURCES, P_SOURCE_REFS,
       P_LEAVES, P_LEAF_NODES, P_GUARDS, P_BLAS, N_TAPE_SLOTS };
enum { A_N, A_CELLS, A_PENDING, A_START, N_ARENA_SLOTS };
/* the record's fields (their places), then the constants the pushes use */
enum { L_FIELDS, L_CODE, L_VOFF, L_SIZE, L_FLAGS, L_ARG, L_NARG, L_NDIM, L_SHP, L_IAT, L_NIAT,
       L_FAT, L_NFAT, L_BIG, L_NEEDS_GRAD, L_UNWRITTEN, L_UNSET, L_FLUSH_AT, L_READ_Y,
       L_FLAG_BIG, L_FLAG_F32, L_LEAF_CODE, L_CONST_CODE, L_PRUNE_AT, N_LAYOUT };

static PyTypeObject *tensor_type, *tape_type, *arena_type, *array_type, *ndarray_type;
static Py_ssize_t tensor_off[N_TENSOR_SLOTS], tape_off[N_TAPE_SLOTS], arena_off[N_ARENA_SLOTS];
static long long layout[N_LAYOUT];
static PyObject *fallback_0d, *fallback_array;  /* the Python pairs, with these signatures */
static PyObject *str_size, *str_shape, *str_frombytes, *str_late_min, *str_dtype, *str_f32;
static PyObject *str_code, *str_blas_inner, *str_grads, *str_enabled, *str_ndim, *str_type;
/* push_node's: record.push_node's Python body, the anomaly mode's state object, and whether
 * a product's node must flag its tape for a hold of the user's BLAS pools */
static PyObject *node_python, *anomaly_state;
static int products_hold;
/* the tape module's globals: its _LATE_MIN is read at each push (tests change it) */
static PyObject *tape_globals;
static int ready;

static int
slot_offsets(PyTypeObject *type, PyObject *names, Py_ssize_t *out, Py_ssize_t n)
{
    if (!PyTuple_Check(names) || PyTuple_GET_SIZE(names) != n) {
        PyErr_Format(PyExc_ValueError, "setup: %zd slot names expected for %s", n, type->tp_name);
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
    PyObject *tensor_names, *tape_names, *arena_names, *lay, *probe, *py_0d, *py_array, *globals;
    PyTypeObject *tt, *pt, *at, *nt;
    ready = 0;  /* until this setup succeeds: the pushes call the Python pairs meanwhile */
    if (!PyArg_ParseTuple(args, "O!OO!OO!OO!OOOOO!", &PyType_Type, &tt, &tensor_names,
                          &PyType_Type, &pt, &tape_names, &PyType_Type, &at, &arena_names,
                          &PyType_Type, &nt, &lay, &probe, &py_0d, &py_array, &PyDict_Type,
                          &globals))
        return NULL;
    PyObject *late_min = PyDict_GetItemWithError(globals, str_late_min);
    if (late_min == NULL || !PyLong_CheckExact(late_min))
        return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_TypeError,
                                                      "setup: no int _LATE_MIN in the globals");
    if (!PyCallable_Check(py_0d) || !PyCallable_Check(py_array))
        return PyErr_Format(PyExc_TypeError, "setup: the Python pairs must be callable");
    if (slot_offsets(tt, tensor_names, tensor_off, N_TENSOR_SLOTS) < 0 ||
            slot_offsets(pt, tape_names, tape_off, N_TAPE_SLOTS) < 0 ||
            slot_offsets(at, arena_names, arena_off, N_ARENA_SLOTS) < 0 ||
            check_array_layout(probe) < 0)
        return NULL;
    if (!PyTuple_Check(lay) || PyTuple_GET_SIZE(lay) != N_LAYOUT)
        return PyErr_Format(PyExc_ValueError, "setup: %d layout entries expected", N_LAYOUT);
    long long lay_values[N_LAYOUT];
    for (Py_ssize_t i = 0; i < N_LAYOUT; i++) {
        lay_values[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(lay, i));
        if (lay_values[i] == -1 && PyErr_Occurred())
            return NULL;
    }
    if (lay_values[L_FIELDS] <= 0 || lay_values[L_FIELDS] > MAX_FIELDS)
        return PyErr_Format(PyExc_ValueError, "setup: %lld fields", lay_values[L_FIELDS]);
    for (Py_ssize_t i = L_CODE; i <= L_BIG; i++)
        if (lay_values[i] < 0 || lay_values[i] >= lay_values[L_FIELDS])
            return PyErr_Format(PyExc_ValueError, "setup: field %zd out of the record", i);
    memcpy(layout, lay_values, sizeof(layout));
    Py_XSETREF(fallback_0d, Py_NewRef(py_0d));
    Py_XSETREF(fallback_array, Py_NewRef(py_array));
    Py_XSETREF(tape_globals, Py_NewRef(globals));
    /* types held for good: the module lives as long as the interpreter */
    tensor_type = (PyTypeObject *)Py_NewRef(tt);
    tape_type = (PyTypeObject *)Py_NewRef(pt);
    arena_type = (PyTypeObject *)Py_NewRef(at);
    ndarray_type = (PyTypeObject *)Py_NewRef(nt);
    array_type = (PyTypeObject *)Py_NewRef(Py_TYPE(probe));
    ready = 1;
    Py_RETURN_NONE;
}

static inline void
set_slot(PyObject *obj, Py_ssize_t off, PyObject *value)
{
    PyObject *old = SLOT(obj, off);
    SLOT(obj, off) = Py_NewRef(value);
    Py_XDECREF(old);
}

/* an array.array of 8-byte items that nothing views (its buffers can move) */
static inline int
growable(PyObject *arr)
{
    return arr != NULL && Py_IS_TYPE(arr, array_type) && ((ArrayObject *)arr)->ob_exports == 0;
}

/* n items appended to a growable array: in place where it has room, else by its own
 * frombytes (which grows it as Python would) */
static int
append_items(PyObject *arr, const void *items, Py_ssize_t n)
{
    ArrayObject *a = (ArrayObject *)arr;
    if (n == 0)
        return 0;
    if (Py_SIZE(a) + n <= a->allocated) {
        memcpy(a->ob_item + Py_SIZE(a) * 8, items, n * 8);
        Py_SET_SIZE(a, Py_SIZE(a) + n);
        return 0;
    }
    PyObject *bytes = PyBytes_FromStringAndSize(items, n * 8);
    if (bytes == NULL)
        return -1;
    PyObject *r = PyObject_CallMethodOneArg(arr, str_frombytes, bytes);
    Py_DECREF(bytes);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

static inline int
args_ok(PyObject *args)
{
    return args != NULL && PyByteArray_CheckExact(args) &&
           ((PyByteArrayObject *)args)->ob_exports == 0;
}

/* the node's record (last, as in push()), then its Tensor, as _make makes it; takes
 * node_obj's reference and t's */
static PyObject *make(PyObject *t, PyObject *tape, PyObject *value, PyObject *node_obj);

/* obj.name as a Py_ssize_t into *out; -1 with the error set where it fails */
static int
int_attr(PyObject *obj, PyObject *name, Py_ssize_t *out)
{
    PyObject *v = PyObject_GetAttr(obj, name);
    if (v == NULL)
        return -1;
    *out = PyLong_AsSsize_t(v);
    Py_DECREF(v);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

static PyObject *
finish(PyObject *t, PyObject *tape, PyObject *value, PyObject *node_obj, const long long *rec)
{
    if (append_items(SLOT(tape, tape_off[P_NODES]), rec, layout[L_FIELDS]) < 0) {
        Py_DECREF(node_obj);
        Py_DECREF(t);
        return NULL;
    }
    return make(t, tape, value, node_obj);
}

/* t (new, its slots empty) made the Tensor of `value` at node_obj of `tape` (None: no tape),
 * as _make makes it; takes node_obj's reference and t's */
static PyObject *
make(PyObject *t, PyObject *tape, PyObject *value, PyObject *node_obj)
{
    SLOT(t, tensor_off[T_DATA]) = Py_NewRef(value);
    SLOT(t, tensor_off[T_REQUIRES_GRAD]) = Py_NewRef(tape == Py_None ? Py_False : Py_True);
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
}

static int
read_attrs(PyObject *tuple, long long *ints, double *floats)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuple); i++) {
        PyObject *x = PyTuple_GET_ITEM(tuple, i);
        if (ints != NULL)
            ints[i] = PyLong_AsLongLong(x);
        else
            floats[i] = PyFloat_Check(x) ? PyFloat_AS_DOUBLE(x) : PyFloat_AsDouble(x);
    }
    return PyErr_Occurred() ? -1 : 0;
}

/* the node's operands appended to the tape's argument bytes (8 or 16 of them) */
static int
append_args(PyObject *args, long long a, long long b)
{
    Py_ssize_t nbytes = PyByteArray_GET_SIZE(args);
    if (PyByteArray_Resize(args, nbytes + (b < 0 ? 8 : 16)) < 0)
        return -1;
    long long *out = (long long *)(PyByteArray_AS_STRING(args) + nbytes);
    out[0] = a;
    if (b >= 0)
        out[1] = b;
    return 0;
}

static PyObject *
push_make(PyObject *Py_UNUSED(self), PyObject *const *argv, Py_ssize_t nargs)
{
    if (nargs != 6)
        return PyErr_Format(PyExc_TypeError, "push_make() takes 6 arguments (%zd given)", nargs);
    if (fallback_0d == NULL)
        return PyErr_Format(PyExc_RuntimeError, "push_make() before setup()");
    PyObject *tape = argv[0], *value = argv[2], *fat = argv[5];
    if (!ready || !Py_IS_TYPE(tape, tape_type) || !PyTuple_Check(fat) ||
            PyTuple_GET_SIZE(fat) > MAX_ATTRS)
        return PyObject_Vectorcall(fallback_0d, argv, nargs, NULL);
    long long code = PyLong_AsLongLong(argv[1]);
    long long a = PyLong_AsLongLong(argv[3]);
    long long b = PyLong_AsLongLong(argv[4]);
    double x = PyFloat_Check(value) ? PyFloat_AS_DOUBLE(value) : PyFloat_AsDouble(value);
    Py_ssize_t nfat = PyTuple_GET_SIZE(fat);
    double fats[MAX_ATTRS];
    if (PyErr_Occurred() || read_attrs(fat, NULL, fats) < 0)
        return NULL;
    /* every allocation before the tape is read: a collection it starts may run Python */
    PyObject *t = tensor_type->tp_alloc(tensor_type, 0);
    if (t == NULL)
        return NULL;
    PyObject *nodes = SLOT(tape, tape_off[P_NODES]), *args = SLOT(tape, tape_off[P_ARGS]);
    PyObject *fat_arr = SLOT(tape, tape_off[P_FAT]), *val = SLOT(tape, tape_off[P_VAL]);
    if (!growable(nodes) || !growable(fat_arr) || !args_ok(args) || val == NULL ||
            !Py_IS_TYPE(val, arena_type))
        goto python;
    PyObject *pending = SLOT(val, arena_off[A_PENDING]), *cells = SLOT(val, arena_off[A_CELLS]);
    PyObject *n_obj = SLOT(val, arena_off[A_N]);
    if (pending == NULL || !PyList_CheckExact(pending) || PyList_GET_SIZE(pending) ||
            cells == NULL || !PyMemoryView_Check(cells) || n_obj == NULL ||
            !PyLong_CheckExact(n_obj))
        goto python;
    Py_buffer *cb = PyMemoryView_GET_BUFFER(cells);
    Py_ssize_t voff = PyLong_AsSsize_t(n_obj);
    if (voff < 0 || cb->readonly || cb->itemsize != 8 || voff >= cb->len / 8)
        goto python;  /* (the arena grows in Python) */
    long long rec[MAX_FIELDS] = {0};
    rec[layout[L_ARG]] = PyByteArray_GET_SIZE(args) >> 3;
    rec[layout[L_FAT]] = nfat ? Py_SIZE(fat_arr) : 0;
    PyObject *node_obj = PyLong_FromSsize_t(Py_SIZE(nodes) / layout[L_FIELDS]);
    PyObject *n_next = PyLong_FromSsize_t(voff + 1);
    if (node_obj == NULL || n_next == NULL) {
        Py_XDECREF(node_obj);
        Py_XDECREF(n_next);
        Py_DECREF(t);
        return NULL;
    }
    /* in push_0d's order, the record last: a failed append leaves only entries no node
     * points to */
    ((double *)cb->buf)[voff] = x;
    set_slot(val, arena_off[A_N], n_next);
    Py_DECREF(n_next);
    if (append_items(fat_arr, fats, nfat) < 0 || append_args(args, a, b) < 0) {
        Py_DECREF(node_obj);
        Py_DECREF(t);
        return NULL;
    }
    rec[layout[L_CODE]] = code;
    rec[layout[L_VOFF]] = voff;
    rec[layout[L_SIZE]] = 1;
    rec[layout[L_FLAGS]] = layout[L_NEEDS_GRAD];
    rec[layout[L_NARG]] = b < 0 ? 1 : 2;
    rec[layout[L_NFAT]] = nfat;
    rec[layout[L_BIG]] = -1;
    return finish(t, tape, value, node_obj, rec);
python:
    Py_DECREF(t);
    return PyObject_Vectorcall(fallback_0d, argv, nargs, NULL);
}

static PyObject *
push_array_make(PyObject *Py_UNUSED(self), PyObject *const *argv, Py_ssize_t nargs)
{
    if (nargs != 9)
        return PyErr_Format(PyExc_TypeError, "push_array_make() takes 9 arguments (%zd given)",
                            nargs);
    if (fallback_array == NULL)
        return PyErr_Format(PyExc_RuntimeError, "push_array_make() before setup()");
    PyObject *tape = argv[0], *value = argv[2], *iat = argv[5], *fat = argv[6];
    if (!ready || !Py_IS_TYPE(tape, tape_type) || !Py_IS_TYPE(value, ndarray_type) ||
            !PyTuple_Check(iat) || !PyTuple_Check(fat) || PyTuple_GET_SIZE(iat) > MAX_ATTRS ||
            PyTuple_GET_SIZE(fat) > MAX_ATTRS || SLOT(tape, tape_off[P_HAS_BIG]) != Py_False)
        return PyObject_Vectorcall(fallback_array, argv, nargs, NULL);
    long long code = PyLong_AsLongLong(argv[1]);
    long long a = PyLong_AsLongLong(argv[3]);
    long long b = PyLong_AsLongLong(argv[4]);
    long long f32 = PyLong_AsLongLong(argv[7]);
    long long reads = PyLong_AsLongLong(argv[8]);
    Py_ssize_t niat = PyTuple_GET_SIZE(iat), nfat = PyTuple_GET_SIZE(fat);
    long long iats[MAX_ATTRS];
    double fats[MAX_ATTRS];
    if (PyErr_Occurred() || read_attrs(iat, iats, NULL) < 0 || read_attrs(fat, NULL, fats) < 0)
        return NULL;
    Py_ssize_t size;
    if (int_attr(value, str_size, &size) < 0)
        return NULL;
    PyObject *shape = PyObject_GetAttr(value, str_shape);
    if (shape == NULL)
        return NULL;
    Py_ssize_t ndim = PyTuple_Check(shape) ? PyTuple_GET_SIZE(shape) : MAX_DIMS + 1;
    long long dims[MAX_DIMS];
    for (Py_ssize_t i = 0; i < ndim && ndim <= MAX_DIMS; i++)
        dims[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
    Py_DECREF(shape);
    if (PyErr_Occurred())
        return NULL;
    PyObject *big = SLOT(tape, tape_off[P_BIG]);
    Py_ssize_t big_at = big != NULL && PyLong_CheckExact(big) ? PyLong_AsSsize_t(big) : -1;
    if (big_at == -1 && PyErr_Occurred())
        return NULL;
    if (size <= 0 || size >= big_at || ndim > MAX_DIMS)  /* push() or an unusual tape */
        return PyObject_Vectorcall(fallback_array, argv, nargs, NULL);
    /* every allocation before the tape is read: a collection it starts may run Python */
    PyObject *t = tensor_type->tp_alloc(tensor_type, 0);
    if (t == NULL)
        return NULL;
    PyObject *nodes = SLOT(tape, tape_off[P_NODES]), *args = SLOT(tape, tape_off[P_ARGS]);
    PyObject *shapes = SLOT(tape, tape_off[P_SHAPES]), *iat_arr = SLOT(tape, tape_off[P_IAT]);
    PyObject *fat_arr = SLOT(tape, tape_off[P_FAT]), *val = SLOT(tape, tape_off[P_VAL]);
    PyObject *unwritten = SLOT(tape, tape_off[P_UNWRITTEN_NODES]);
    if (SLOT(tape, tape_off[P_HAS_BIG]) != Py_False || !growable(nodes) || !growable(shapes) ||
            !growable(iat_arr) || !growable(fat_arr) || !args_ok(args) || val == NULL ||
            !Py_IS_TYPE(val, arena_type) || unwritten == NULL || !PyList_CheckExact(unwritten))
        goto python;
    PyObject *pending = SLOT(val, arena_off[A_PENDING]), *n_obj = SLOT(val, arena_off[A_N]);
    if (pending == NULL || !PyList_CheckExact(pending) || n_obj == NULL ||
            !PyLong_CheckExact(n_obj))
        goto python;
    PyObject *late_min = PyDict_GetItemWithError(tape_globals, str_late_min);
    if (late_min == NULL || !PyLong_CheckExact(late_min))
        goto python;
    int keep = size < PyLong_AsSsize_t(late_min) || (reads & layout[L_READ_Y]) ||
               SLOT(tape, tape_off[P_KEEP_ALL]) == Py_True;
    if (keep && PyList_GET_SIZE(pending) >= layout[L_FLUSH_AT])
        goto python;  /* a flush is due */
    Py_ssize_t n = PyLong_AsSsize_t(n_obj);
    if (n < 0)
        goto python;
    long long rec[MAX_FIELDS] = {0};
    PyObject *node_obj = PyLong_FromSsize_t(Py_SIZE(nodes) / layout[L_FIELDS]);
    PyObject *n_next = keep ? PyLong_FromSsize_t(n + size) : NULL;
    PyObject *start = keep ? PyLong_FromSsize_t(n) : NULL;
    int first = PyList_GET_SIZE(pending) == 0;
    /* in push_array's order, the record last: a failed append leaves only entries no node
     * points to */
    if (node_obj == NULL || (keep && (n_next == NULL || start == NULL ||
                                      PyList_Append(pending, value) < 0)))
        goto error;
    long long flags = layout[L_NEEDS_GRAD] | f32;
    long long voff = n;
    if (keep) {
        if (first)
            set_slot(val, arena_off[A_START], start);
        set_slot(val, arena_off[A_N], n_next);
    } else {
        voff = layout[L_UNSET];
        flags |= layout[L_UNWRITTEN];
    }
    rec[layout[L_ARG]] = PyByteArray_GET_SIZE(args) >> 3;
    rec[layout[L_SHP]] = Py_SIZE(shapes);
    rec[layout[L_IAT]] = Py_SIZE(iat_arr);
    rec[layout[L_FAT]] = Py_SIZE(fat_arr);
    if (append_items(shapes, dims, ndim) < 0 || append_args(args, a, b) < 0 ||
            append_items(iat_arr, iats, niat) < 0 || append_items(fat_arr, fats, nfat) < 0)
        goto error;
    Py_XDECREF(n_next);
    Py_XDECREF(start);
    rec[layout[L_CODE]] = code;
    rec[layout[L_VOFF]] = voff;
    rec[layout[L_SIZE]] = size;
    rec[layout[L_FLAGS]] = flags;
    rec[layout[L_NARG]] = b < 0 ? 1 : 2;
    rec[layout[L_NDIM]] = ndim;
    rec[layout[L_NIAT]] = niat;
    rec[layout[L_NFAT]] = nfat;
    rec[layout[L_BIG]] = -1;
    if (keep)
        return finish(t, tape, value, node_obj, rec);
    /* (after the record, as in push_array: a backward's place_unwritten reads it) */
    Py_INCREF(node_obj);
    t = finish(t, tape, value, node_obj, rec);
    if (t == NULL || PyList_Append(unwritten, node_obj) < 0) {
        Py_DECREF(node_obj);
        Py_XDECREF(t);
        return NULL;
    }
    Py_DECREF(node_obj);
    set_slot(tape, tape_off[P_HAS_UNWRITTEN], Py_True);
    return t;
error:
    Py_XDECREF(node_obj);
    Py_XDECREF(n_next);
    Py_XDECREF(start);
    Py_DECREF(t);
    return NULL;
python:
    Py_DECREF(t);
    return PyObject_Vectorcall(fallback_array, argv, nargs, NULL);
}

/* A sequence of numbers push() appends: a tuple or list of at most MAX_ATTRS, read as
 * int64 or double, or (`buffers`) any C-contiguous buffer of 8-byte items of that kind,
 * read in place. */
typedef struct {
    const void *items;
    Py_ssize_t n;
    Py_buffer view;
    int viewed;
    long long small[MAX_ATTRS];
} Items;

/* 1: read into `it`; 0: not a form read here (push() takes it; no error set) */
static int
read_items(PyObject *obj, int floats, int buffers, Items *it)
{
    it->viewed = 0;
    if (PyTuple_Check(obj) || PyList_Check(obj)) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
        if (n > MAX_ATTRS)
            return 0;
        PyObject **xs = PySequence_Fast_ITEMS(obj);
        for (Py_ssize_t i = 0; i < n; i++) {
            if (floats)
                ((double *)it->small)[i] = PyFloat_Check(xs[i]) ? PyFloat_AS_DOUBLE(xs[i])
                                                                : PyFloat_AsDouble(xs[i]);
            else
                it->small[i] = PyLong_AsLongLong(xs[i]);
        }
        if (PyErr_Occurred()) {  /* (push() raises its own error for it) */
            PyErr_Clear();
            return 0;
        }
        it->items = it->small;
        it->n = n;
        return 1;
    }
    if (!buffers || !PyObject_CheckBuffer(obj))
        return 0;
    if (PyObject_GetBuffer(obj, &it->view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyErr_Clear();
        return 0;
    }
    const char *f = it->view.format;
    int kind_ok = f != NULL && f[0] != '\0' && f[1] == '\0' &&
                  (floats ? f[0] == 'd' : (f[0] == 'q' || f[0] == 'l'));
    if (!kind_ok || it->view.itemsize != 8 || it->view.ndim > 1) {  /* (push() takes len()) */
        PyBuffer_Release(&it->view);
        return 0;
    }
    it->viewed = 1;
    it->items = it->view.buf;
    it->n = it->view.len / 8;
    return 1;
}

static void
release_items(Items *it)
{
    if (it->viewed)
        PyBuffer_Release(&it->view);
    it->viewed = 0;
}

static PyObject *
push_big(PyObject *Py_UNUSED(self), PyObject *const *argv, Py_ssize_t nargs)
{
    if (nargs != 9)
        return PyErr_Format(PyExc_TypeError, "push_big() takes 9 arguments (%zd given)", nargs);
    PyObject *tape = argv[0], *value = argv[2], *result = NULL;
    if (!ready || !Py_IS_TYPE(tape, tape_type))
        Py_RETURN_NONE;
    long long code = PyLong_AsLongLong(argv[1]);
    long long size = PyLong_AsLongLong(argv[3]);
    long long flags = PyLong_AsLongLong(argv[8]);
    if (PyErr_Occurred())
        return NULL;
    if (flags & layout[L_UNWRITTEN])
        Py_RETURN_NONE;
    Items shape, operands, iat, fat;
    shape.viewed = operands.viewed = iat.viewed = fat.viewed = 0;
    if (!PyTuple_Check(argv[4]) || read_items(argv[4], 0, 0, &shape) < 1 ||
            read_items(argv[5], 0, 0, &operands) < 1 || read_items(argv[6], 0, 1, &iat) < 1 ||
            read_items(argv[7], 1, 1, &fat) < 1) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    PyObject *nodes = SLOT(tape, tape_off[P_NODES]), *args = SLOT(tape, tape_off[P_ARGS]);
    PyObject *shapes = SLOT(tape, tape_off[P_SHAPES]), *iat_arr = SLOT(tape, tape_off[P_IAT]);
    PyObject *fat_arr = SLOT(tape, tape_off[P_FAT]), *big_val = SLOT(tape, tape_off[P_BIG_VAL]);
    if (!growable(nodes) || !growable(shapes) || !growable(iat_arr) || !growable(fat_arr) ||
            !args_ok(args) || big_val == NULL || !PyList_CheckExact(big_val)) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    long long rec[MAX_FIELDS] = {0};
    PyObject *node_obj = PyLong_FromSsize_t(Py_SIZE(nodes) / layout[L_FIELDS]);
    if (node_obj == NULL)
        goto done;
    rec[layout[L_BIG]] = PyList_GET_SIZE(big_val);
    /* in push()'s order, the record last: a failed append leaves only entries no node
     * points to */
    if (PyList_Append(big_val, value) < 0)
        goto error;
    set_slot(tape, tape_off[P_HAS_BIG], Py_True);
    set_slot(tape, tape_off[P_PLAIN], Py_False);
    rec[layout[L_ARG]] = PyByteArray_GET_SIZE(args) >> 3;
    rec[layout[L_SHP]] = Py_SIZE(shapes);
    rec[layout[L_IAT]] = Py_SIZE(iat_arr);
    rec[layout[L_FAT]] = Py_SIZE(fat_arr);
    if (append_items(shapes, shape.items, shape.n) < 0)
        goto error;
    if (operands.n) {
        Py_ssize_t nbytes = PyByteArray_GET_SIZE(args);
        if (PyByteArray_Resize(args, nbytes + operands.n * 8) < 0)
            goto error;
        memcpy(PyByteArray_AS_STRING(args) + nbytes, operands.items, operands.n * 8);
    }
    if (append_items(iat_arr, iat.items, iat.n) < 0 || append_items(fat_arr, fat.items, fat.n) < 0)
        goto error;
    rec[layout[L_CODE]] = code;
    rec[layout[L_VOFF]] = -1;
    rec[layout[L_SIZE]] = size;
    rec[layout[L_FLAGS]] = flags;
    rec[layout[L_NARG]] = operands.n;
    rec[layout[L_NDIM]] = shape.n;
    rec[layout[L_NIAT]] = iat.n;
    rec[layout[L_NFAT]] = fat.n;
    if (append_items(nodes, rec, layout[L_FIELDS]) < 0)
        goto error;
    result = node_obj;
    goto done;
error:
    Py_DECREF(node_obj);
done:
    release_items(&shape);
    release_items(&operands);
    release_items(&iat);
    release_items(&fat);
    return result;
}

/* the weak reference to `tape` appended to source t's _captured_by list (made when None),
 * the list first cleared of dead tapes' references from PRUNE_AT of them, as
 * Tape._capture does */
static int
note_capture(PyObject *t, PyObject *tape)
{
    PyObject *tapes = SLOT(t, tensor_off[T_CAPTURED_BY]);
    PyObject *ref = PyWeakref_NewRef(tape, NULL);
    if (ref == NULL)
        return -1;
    if (tapes == NULL || tapes == Py_None) {
        PyObject *list = PyList_New(1);
        if (list == NULL) {
            Py_DECREF(ref);
            return -1;
        }
        PyList_SET_ITEM(list, 0, ref);
        SLOT(t, tensor_off[T_CAPTURED_BY]) = list;
        Py_XDECREF(tapes);
        return 0;
    }
    if (PyList_GET_SIZE(tapes) >= layout[L_PRUNE_AT]) {
        Py_ssize_t kept = 0, n = PyList_GET_SIZE(tapes);
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *r = PyList_GET_ITEM(tapes, i);
            if (!PyWeakref_Check(r) || PyWeakref_GET_OBJECT(r) != Py_None) {
                Py_INCREF(r);  /* kept in order; a non-reference is kept, as ref() of it */
                PyObject *old = PyList_GET_ITEM(tapes, kept);
                PyList_SET_ITEM(tapes, kept, r);
                Py_DECREF(old);
                kept++;
            }
        }
        if (PyList_SetSlice(tapes, kept, n, NULL) < 0) {
            Py_DECREF(ref);
            return -1;
        }
    }
    int rc = PyList_Append(tapes, ref);
    Py_DECREF(ref);
    return rc;
}

/* source_big(tape, t, with_big): Tape.source() of a tensor new to `tape` (its caller looked
 * it up) that becomes a big node, pushed and captured as the Python code does it; None
 * where that code must (a trace's tape, a value not an ndarray, an arena node, a
 * _captured_by that is not a list), nothing pushed. */
static PyObject *
source_big(PyObject *Py_UNUSED(self), PyObject *const *argv, Py_ssize_t nargs)
{
    if (nargs != 3)
        return PyErr_Format(PyExc_TypeError, "source_big() takes 3 arguments (%zd given)",
                            nargs);
    PyObject *tape = argv[0], *t = argv[1];
    if (!ready || !Py_IS_TYPE(tape, tape_type) || !PyObject_TypeCheck(t, tensor_type) ||
            SLOT(tape, tape_off[P_GUARDS]) != Py_None)
        Py_RETURN_NONE;
    PyObject *data = SLOT(t, tensor_off[T_DATA]), *tapes = SLOT(t, tensor_off[T_CAPTURED_BY]);
    PyObject *sources = SLOT(tape, tape_off[P_SOURCES]);
    PyObject *refs = SLOT(tape, tape_off[P_SOURCE_REFS]), *leaves = SLOT(tape, tape_off[P_LEAVES]);
    PyObject *leaf_nodes = SLOT(tape, tape_off[P_LEAF_NODES]);
    if (data == NULL || !Py_IS_TYPE(data, ndarray_type) ||
            (tapes != NULL && tapes != Py_None && !PyList_CheckExact(tapes)) ||
            sources == NULL || !PyDict_CheckExact(sources) || refs == NULL ||
            !PyList_CheckExact(refs) || leaves == NULL || !PyList_CheckExact(leaves) ||
            !growable(leaf_nodes))
        Py_RETURN_NONE;
    PyObject *size_obj = PyObject_GetAttr(data, str_size);
    if (size_obj == NULL)
        return NULL;
    long long size = PyLong_AsLongLong(size_obj);
    long long threshold = PyLong_AsLongLong(SLOT(tape, tape_off[P_BIG]));
    int with_big = PyObject_IsTrue(argv[2]);
    if (PyErr_Occurred() || with_big < 0) {
        Py_DECREF(size_obj);
        return NULL;
    }
    if (!(size >= threshold || (with_big && size > 1))) {
        Py_DECREF(size_obj);
        Py_RETURN_NONE;
    }
    PyObject *f32 = PyDict_GetItemWithError(tape_globals, str_f32);
    PyObject *dtype = PyObject_GetAttr(data, str_dtype);
    PyObject *shape = PyObject_GetAttr(data, str_shape);
    PyObject *result = NULL, *node = NULL, *key = NULL, *pair = NULL;
    PyObject *code = NULL, *flags_obj = NULL;
    if (dtype == NULL || shape == NULL || (f32 == NULL && PyErr_Occurred()))
        goto done;
    int grad = SLOT(t, tensor_off[T_REQUIRES_GRAD]) == Py_True;
    long long flags = (grad ? layout[L_NEEDS_GRAD] : 0) | layout[L_FLAG_BIG] |
                      (dtype == f32 ? layout[L_FLAG_F32] : 0);
    code = PyLong_FromLongLong(layout[grad ? L_LEAF_CODE : L_CONST_CODE]);
    flags_obj = PyLong_FromLongLong(flags);
    if (code == NULL || flags_obj == NULL)
        goto done;
    PyObject *empty = PyTuple_New(0);  /* (the empty tuple is a singleton) */
    if (empty == NULL)
        goto done;
    PyObject *push_argv[9] = {tape, code, data, size_obj, shape, empty, empty, empty, flags_obj};
    node = push_big(NULL, push_argv, 9);
    Py_DECREF(empty);
    if (node == NULL || node == Py_None) {
        result = node;  /* an error, or nothing pushed: the Python code takes it */
        node = NULL;
        goto done;
    }
    /* as _capture, then the leaf lists */
    key = PyLong_FromVoidPtr(t);
    if (key == NULL || PyDict_SetItem(sources, key, node) < 0 || PyList_Append(refs, t) < 0 ||
            note_capture(t, tape) < 0)
        goto done;
    if (grad) {
        long long n = PyLong_AsLongLong(node);
        pair = PyTuple_Pack(2, node, t);
        if (pair == NULL || PyList_Append(leaves, pair) < 0 || append_items(leaf_nodes, &n, 1) < 0)
            goto done;
    }
    result = Py_NewRef(node);
done:
    Py_XDECREF(pair);
    Py_XDECREF(key);
    Py_XDECREF(node);
    Py_XDECREF(code);
    Py_XDECREF(flags_obj);
    Py_XDECREF(shape);
    Py_XDECREF(dtype);
    Py_DECREF(size_obj);
    return result;
}

/* setup_push_node(python body, anomaly state, products hold): what push_node hands back to,
 * the object whose `enabled` is anomaly mode's, and whether a product's node flags its tape
 * for a hold of the user's BLAS pools (then Python pushes it) */
static PyObject *
setup_push_node(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *fn, *state;
    int hold;
    if (!PyArg_ParseTuple(args, "OOp", &fn, &state, &hold))
        return NULL;
    if (!PyCallable_Check(fn))
        return PyErr_Format(PyExc_TypeError, "setup_push_node: the Python body must be callable");
    Py_XSETREF(node_python, Py_NewRef(fn));
    Py_XSETREF(anomaly_state, Py_NewRef(state));
    products_hold = hold;
    Py_RETURN_NONE;
}

/* push_node(tape, op, out, size, shape, inputs, args, iat, fat): record.push_node of a big
 * node (an operand big, or `size` from the tape's big size), its Tensor made; the other
 * cases go to the Python body, which it calls: an unwritten operand, a value that is not an
 * ndarray, anomaly mode, float attributes of a float32 elementwise node (rounded there), a
 * node that flags its tape for a BLAS hold, what push_big hands back. */
static PyObject *
push_node(PyObject *Py_UNUSED(self), PyObject *const *argv, Py_ssize_t nargs)
{
    if (nargs != 9)
        return PyErr_Format(PyExc_TypeError, "push_node() takes 9 arguments (%zd given)", nargs);
    if (node_python == NULL)
        return PyErr_Format(PyExc_RuntimeError, "push_node() before setup_push_node()");
    PyObject *tape = argv[0], *op = argv[1], *out = argv[2], *args = argv[6], *fat = argv[8];
    if (!ready || !Py_IS_TYPE(tape, tape_type) || !Py_IS_TYPE(out, ndarray_type) ||
            !(PyTuple_Check(args) || PyList_Check(args)) || !PyTuple_Check(fat))
        return PyObject_Vectorcall(node_python, argv, nargs, NULL);
    /* first what decides it is a big node, read from the tape's records: a small node (most
     * of a small-array graph's) goes to Python at once */
    PyObject *nodes = SLOT(tape, tape_off[P_NODES]);
    if (!growable(nodes))
        return PyObject_Vectorcall(node_python, argv, nargs, NULL);
    const long long *rec = (const long long *)((ArrayObject *)nodes)->ob_item;
    Py_ssize_t n_nodes = Py_SIZE(nodes) / layout[L_FIELDS];
    long long argflags = 0;
    Py_ssize_t n_args = PySequence_Fast_GET_SIZE(args);
    PyObject **items = PySequence_Fast_ITEMS(args);
    for (Py_ssize_t i = 0; i < n_args; i++) {
        long long a = PyLong_AsLongLong(items[i]);
        if ((a == -1 && PyErr_Occurred()) || a < 0 || a >= n_nodes) {
            PyErr_Clear();
            return PyObject_Vectorcall(node_python, argv, nargs, NULL);
        }
        argflags |= rec[a * layout[L_FIELDS] + layout[L_FLAGS]];
    }
    long long size = PyLong_AsLongLong(argv[3]);
    long long threshold = PyLong_AsLongLong(SLOT(tape, tape_off[P_BIG]));
    if (PyErr_Occurred())
        return NULL;
    if ((argflags & layout[L_UNWRITTEN]) ||
            !(size >= threshold || (argflags & layout[L_FLAG_BIG])))
        return PyObject_Vectorcall(node_python, argv, nargs, NULL);
    /* every allocation before the tape is written: a collection it starts may run Python */
    PyObject *t = tensor_type->tp_alloc(tensor_type, 0);
    if (t == NULL)
        return NULL;
    PyObject *code = NULL, *flags_obj = NULL, *node = NULL, *attr = NULL, *dtype = NULL;
    attr = PyObject_GetAttr(anomaly_state, str_enabled);
    int anomaly = attr == NULL ? -1 : PyObject_IsTrue(attr);
    Py_CLEAR(attr);
    if (anomaly < 0)
        goto error;
    if (anomaly)
        goto python;
    attr = PyObject_GetAttr(op, str_blas_inner);
    if (attr == NULL)
        goto error;
    if (attr != Py_None) {
        long k = PyLong_AsLong(attr);
        if (k == -1 && PyErr_Occurred())
            goto error;
        if (SLOT(tape, tape_off[P_BLAS]) != Py_True && (k < 0 || products_hold))
            goto python;
    }
    Py_CLEAR(attr);
    dtype = PyObject_GetAttr(out, str_dtype);
    PyObject *f32 = PyDict_GetItemWithError(tape_globals, str_f32);
    if (dtype == NULL || (f32 == NULL && PyErr_Occurred()))
        goto error;
    int is_f32 = dtype == f32;
    if (is_f32 && PyTuple_GET_SIZE(fat)) {
        attr = PyObject_GetAttr(op, str_grads);  /* elementwise: its grads are declared */
        if (attr == NULL)
            goto error;
        if (attr != Py_None)
            goto python;
        Py_CLEAR(attr);
    }
    code = PyObject_GetAttr(op, str_code);
    flags_obj = PyLong_FromLongLong(layout[L_NEEDS_GRAD] | layout[L_FLAG_BIG] |
                                    (is_f32 ? layout[L_FLAG_F32] : 0));
    if (code == NULL || flags_obj == NULL)
        goto error;
    PyObject *push_argv[9] = {tape, code, out, argv[3], argv[4], args, argv[7], fat, flags_obj};
    node = push_big(NULL, push_argv, 9);
    if (node == NULL)
        goto error;
    if (node == Py_None)
        goto python;
    Py_DECREF(code);
    Py_DECREF(flags_obj);
    Py_DECREF(dtype);
    return make(t, tape, out, node);
python:
    Py_XDECREF(attr);
    Py_XDECREF(code);
    Py_XDECREF(flags_obj);
    Py_XDECREF(node);
    Py_XDECREF(dtype);
    Py_DECREF(t);
    return PyObject_Vectorcall(node_python, argv, nargs, NULL);
error:
    Py_XDECREF(attr);
    Py_XDECREF(code);
    Py_XDECREF(flags_obj);
    Py_XDECREF(dtype);
    Py_DECREF(t);
    return NULL;
}

/* addresses(tensors, format, sizes, writable): the data address of each tensor's array, a
 * list of ints (what an optimizer's kernel reads its parameters through), or None where one
 * is not a C-contiguous buffer of `sizes[i]` items of `format` (writable where asked): the
 * optimizer's Python takes those. */
static PyObject *
addresses(PyObject *Py_UNUSED(self), PyObject *const *argv, Py_ssize_t nargs)
{
    if (nargs != 4)
        return PyErr_Format(PyExc_TypeError, "addresses() takes 4 arguments (%zd given)", nargs);
    PyObject *tensors = argv[0], *sizes = argv[2];
    int writable = PyObject_IsTrue(argv[3]);
    if (writable < 0)
        return NULL;
    if (!ready || !PyList_Check(tensors) || !PyList_Check(sizes) || !PyUnicode_Check(argv[1]) ||
            PyList_GET_SIZE(sizes) != PyList_GET_SIZE(tensors))
        Py_RETURN_NONE;
    const char *format = PyUnicode_AsUTF8(argv[1]);
    if (format == NULL)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(tensors);
    PyObject *out = PyList_New(n);
    if (out == NULL)
        return NULL;
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PyList_GET_ITEM(tensors, i);
        if (!PyObject_TypeCheck(t, tensor_type))
            goto other;
        PyObject *data = SLOT(t, tensor_off[T_DATA]);
        if (data == NULL || !Py_IS_TYPE(data, ndarray_type))
            goto other;
        Py_ssize_t size = PyLong_AsSsize_t(PyList_GET_ITEM(sizes, i));
        if (size == -1 && PyErr_Occurred()) {
            Py_DECREF(out);
            return NULL;
        }
        Py_buffer view;
        if (PyObject_GetBuffer(data, &view, flags) < 0) {
            PyErr_Clear();  /* (read-only, strided: the Python path says what is wrong) */
            goto other;
        }
        int ok = view.format != NULL && strcmp(view.format, format) == 0 && view.itemsize > 0 &&
                 view.len / view.itemsize == size && size > 0;
        void *buf = view.buf;
        PyBuffer_Release(&view);
        if (!ok)
            goto other;
        PyObject *address = PyLong_FromVoidPtr(buf);
        if (address == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, address);
    }
    return out;
other:
    Py_DECREF(out);
    Py_RETURN_NONE;
}

/* reached_leaves(leaf_nodes, touched, nodes, adj, hit, voff, first): of the tape's leaves
 * (their nodes, int64), those a backward reached (`touched`, uint8 by node): their places
 * in `leaf_nodes` into `hit`, their value offsets into `voff` and their adjoints' first
 * values into `first` (0 where a leaf's offset is negative, a big node's); returns how many.
 * A compiled loop over those cold records overlaps their cache misses where NumPy's three
 * fancy-indexing passes take them one at a time. -1 where a buffer or an index is not what
 * it should be: the Python reads take those. */
static PyObject *
reached_leaves(PyObject *Py_UNUSED(self), PyObject *const *argv, Py_ssize_t nargs)
{
    if (nargs != 7)
        return PyErr_Format(PyExc_TypeError, "reached_leaves() takes 7 arguments (%zd given)",
                            nargs);
    Py_buffer v[7];
    int got = 0;
    long long k = -1;
    for (; got < 7; got++)
        if (PyObject_GetBuffer(argv[got], &v[got],
                               PyBUF_C_CONTIGUOUS | PyBUF_FORMAT |
                               (got >= 4 ? PyBUF_WRITABLE : 0)) < 0) {
            PyErr_Clear();
            goto done;
        }
    const long long *leaf_nodes = v[0].buf, *nodes = v[2].buf;
    const unsigned char *touched = v[1].buf;
    const double *adj = v[3].buf;
    long long *hit = v[4].buf, *voff = v[5].buf;
    double *first = v[6].buf;
    Py_ssize_t n = v[0].len / 8, n_nodes = v[1].len, n_adj = v[3].len / 8;
    long long fields = layout[L_FIELDS], f_voff = layout[L_VOFF];
    for (int i = 0; i < 7; i++)
        if (v[i].itemsize != (i == 1 ? 1 : 8))
            goto done;
    if (!ready || strcmp(v[3].format, "d") != 0 || strcmp(v[6].format, "d") != 0 ||
            v[2].len / 8 < n_nodes * fields || v[4].len / 8 < n || v[5].len / 8 < n ||
            v[6].len / 8 < n)
        goto done;
    k = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        long long node = leaf_nodes[i];
        if (node < 0 || node >= n_nodes) {
            k = -1;
            goto done;
        }
        if (!touched[node])
            continue;
        long long off = nodes[node * fields + f_voff];
        if (off >= n_adj) {
            k = -1;
            goto done;
        }
        hit[k] = i;
        voff[k] = off;
        first[k] = off >= 0 ? adj[off] : 0.0;
        k++;
    }
done:
    while (got > 0)
        PyBuffer_Release(&v[--got]);
    return PyLong_FromLongLong(k);
}

/* write_scalar_grads(leaves, hit, voffs, firsts, float64): leaf_grads._write_leaf's common
 * case for each reached leaf k (the pair tape.leaves[hit[k]], its adjoint's offset and first
 * value): a 0-d array leaf that requires grad, has no .grad, no hooks and its adjoint in the
 * arena gets .grad, a Tensor of firsts[k] in the leaf's dtype; a leaf that does not require
 * grad is skipped. Returns the k's it left to Python (a list), or None where an argument is
 * not what it should be (Python writes them all). */
static PyObject *
write_scalar_grads(PyObject *Py_UNUSED(self), PyObject *const *argv, Py_ssize_t nargs)
{
    if (nargs != 5)
        return PyErr_Format(PyExc_TypeError,
                            "write_scalar_grads() takes 5 arguments (%zd given)", nargs);
    PyObject *leaves = argv[0], *hit = argv[1], *voffs = argv[2], *firsts = argv[3];
    PyObject *f64 = argv[4];
    if (!ready || !PyList_Check(leaves) || !PyList_Check(hit) || !PyList_Check(voffs) ||
            !PyList_Check(firsts))
        Py_RETURN_NONE;
    Py_ssize_t n = PyList_GET_SIZE(hit);
    if (PyList_GET_SIZE(voffs) != n || PyList_GET_SIZE(firsts) != n)
        Py_RETURN_NONE;
    PyObject *rest = PyList_New(0);
    if (rest == NULL)
        return NULL;
    for (Py_ssize_t k = 0; k < n; k++) {
        Py_ssize_t h = PyLong_AsSsize_t(PyList_GET_ITEM(hit, k));
        long long voff = PyLong_AsLongLong(PyList_GET_ITEM(voffs, k));
        if (PyErr_Occurred())
            goto error;
        if (h < 0 || h >= PyList_GET_SIZE(leaves))
            goto python;
        PyObject *pair = PyList_GET_ITEM(leaves, h);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2)
            goto python;
        PyObject *leaf = PyTuple_GET_ITEM(pair, 1);
        if (!PyObject_TypeCheck(leaf, tensor_type))
            goto python;
        PyObject *requires_grad = SLOT(leaf, tensor_off[T_REQUIRES_GRAD]);
        if (requires_grad == Py_False)
            continue;
        PyObject *data = SLOT(leaf, tensor_off[T_DATA]);
        PyObject *hooks = SLOT(leaf, tensor_off[T_HOOKS]);
        PyObject *post_hooks = SLOT(leaf, tensor_off[T_POST_HOOKS]);
        if (requires_grad != Py_True || voff < 0 || SLOT(leaf, tensor_off[T_GRAD]) != Py_None ||
                data == NULL || !Py_IS_TYPE(data, ndarray_type) ||
                (hooks != NULL && hooks != Py_None) ||
                (post_hooks != NULL && post_hooks != Py_None))
            goto python;
        Py_ssize_t nd;
        if (int_attr(data, str_ndim, &nd) < 0)
            goto error;
        if (nd != 0)
            goto python;
        PyObject *dtype = PyObject_GetAttr(data, str_dtype);
        if (dtype == NULL)
            goto error;
        PyObject *value, *g = PyList_GET_ITEM(firsts, k);
        if (dtype == f64) {
            value = Py_NewRef(g);
        } else {  /* the first value in the leaf's own dtype, as data.dtype.type(g) */
            PyObject *type = PyObject_GetAttr(dtype, str_type);
            value = type == NULL ? NULL : PyObject_CallOneArg(type, g);
            Py_XDECREF(type);
        }
        Py_DECREF(dtype);
        if (value == NULL)
            goto error;
        PyObject *t = tensor_type->tp_alloc(tensor_type, 0);
        PyObject *node = PyLong_FromLong(-1);
        if (t == NULL || node == NULL) {
            Py_XDECREF(t);
            Py_XDECREF(node);
            Py_DECREF(value);
            goto error;
        }
        make(t, Py_None, value, node);  /* as _make(value): no tape, node -1 */
        Py_DECREF(value);
        PyObject *old = SLOT(leaf, tensor_off[T_GRAD]);
        SLOT(leaf, tensor_off[T_GRAD]) = t;
        Py_DECREF(old);
        continue;
    python:;
        PyObject *place = PyLong_FromSsize_t(k);
        if (place == NULL || PyList_Append(rest, place) < 0) {
            Py_XDECREF(place);
            goto error;
        }
        Py_DECREF(place);
    }
    return rest;
error:
    Py_DECREF(rest);
    return NULL;
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS,
     "setup(Tensor, its slots, Tape, its slots, Arena, its slots, ndarray, record layout, "
     "array('q') probe, the 0-d Python pair, the array Python pair, the tape module's "
     "globals)"},
    {"push_make", (PyCFunction)(void (*)(void))push_make, METH_FASTCALL,
     "push_make(tape, code, value, a, b, fat) -> Tensor"},
    {"push_array_make", (PyCFunction)(void (*)(void))push_array_make, METH_FASTCALL,
     "push_array_make(tape, code, value, a, b, iat, fat, f32, reads) -> Tensor or None"},
    {"push_big", (PyCFunction)(void (*)(void))push_big, METH_FASTCALL,
     "push_big(tape, code, value, size, shape, args, iat, fat, flags) -> node or None"},
    {"setup_push_node", setup_push_node, METH_VARARGS,
     "setup_push_node(record.push_node's Python body, anomaly state, products hold)"},
    {"push_node", (PyCFunction)(void (*)(void))push_node, METH_FASTCALL,
     "push_node(tape, op, out, size, shape, inputs, args, iat, fat) -> Tensor"},
    {"source_big", (PyCFunction)(void (*)(void))source_big, METH_FASTCALL,
     "source_big(tape, t, with_big) -> node or None"},
    {"addresses", (PyCFunction)(void (*)(void))addresses, METH_FASTCALL,
     "addresses(tensors, format, sizes, writable) -> list of int or None"},
    {"reached_leaves", (PyCFunction)(void (*)(void))reached_leaves, METH_FASTCALL,
     "reached_leaves(leaf_nodes, touched, nodes, adj, hit, voff, first) -> count or -1"},
    {"write_scalar_grads", (PyCFunction)(void (*)(void))write_scalar_grads, METH_FASTCALL,
     "write_scalar_grads(leaves, hit, voffs, firsts, float64 dtype) -> list of int or None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fast_push", NULL, -1, methods,
                                     NULL, NULL, NULL, NULL};

PyMODINIT_FUNC
PyInit__fast_push(void)
{
    str_size = PyUnicode_InternFromString("size");
    str_shape = PyUnicode_InternFromString("shape");
    str_frombytes = PyUnicode_InternFromString("frombytes");
    str_late_min = PyUnicode_InternFromString("_LATE_MIN");
    str_dtype = PyUnicode_InternFromString("dtype");
    str_f32 = PyUnicode_InternFromString("_F32");
    str_code = PyUnicode_InternFromString("code");
    str_blas_inner = PyUnicode_InternFromString("blas_inner");
    str_grads = PyUnicode_InternFromString("grads");
    str_enabled = PyUnicode_InternFromString("enabled");
    str_ndim = PyUnicode_InternFromString("ndim");
    str_type = PyUnicode_InternFromString("type");
    if (str_size == NULL || str_shape == NULL || str_frombytes == NULL || str_late_min == NULL ||
            str_dtype == NULL || str_f32 == NULL || str_code == NULL || str_blas_inner == NULL ||
            str_grads == NULL || str_enabled == NULL || str_ndim == NULL || str_type == NULL)
        return NULL;
    return PyModule_Create(&module);
}
