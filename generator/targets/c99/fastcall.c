/* The call of a generated function from Python at the cost of the C: one object per module
 * method, written against CPython's vectorcall protocol and numpy's C API.
 *
 * A Caller takes the method's inputs as they are when each is an aligned, C-contiguous numpy
 * array of the module's dtype and of the expected shape ((size,) for one state, (N, size) for N
 * states; a Python float or int for an input of one entry of one state, e.g. dt), checks them
 * (every entry finite, no zero quaternion in q) and calls the function's argv entry (a pointer
 * array: inputs, then outputs) on fresh output arrays, or on `out=` when it is an array of the
 * result's exact shape (any rank: (m, 4, 4) poses too) that overlaps no input.  Everything else --
 * other types, shapes or dtypes (an int or float32 array is never read as doubles), a misaligned
 * or non-contiguous array, other keywords, a failed check, a singular Omega(0) -- is handed to the
 * method's Python implementation (the fallback), which converts, or raises the error it always
 * raised.  The fallback is the one place where errors are made; this file only decides quickly
 * that there is none.
 *
 * A batch runs in chunks of rows.  Once it has held the GIL for one switch interval
 * (sys.getswitchinterval(), 5 ms by default: the longest Python lets one thread run before handing
 * the GIL on), it releases it for the rest, so other threads wait no longer than they do for
 * Python code, and a call shorter than that never waits to take the GIL back from a busy thread.
 * While the GIL is released, each chunk's inputs are first copied into memory of the call's own
 * and checked there: the C reads only values it checked, whatever another thread writes to the
 * inputs meanwhile (rows it changes get the old or the new values).  Fresh outputs are the call's
 * own until it returns; an `out=` array is written while other threads run.  Each row is the
 * same C call whatever the chunks, so the results do not depend on them.
 *
 * Robot-independent: compiled once per Python and numpy (soagen.targets.c99.fastcall). */
#define PY_SSIZE_T_CLEAN
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <Python.h>
#include <structmember.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <numpy/arrayobject.h>

#define MAX_ARGS 64       /* inputs + outputs of one function */
#define MAX_QUATS 16      /* quaternions in q */
#define MAX_DIMS 8        /* dimensions of an output for one state */
#define CHUNK_BYTES 16384 /* inputs of one chunk of a batch: copied, checked and read while in L1 */

typedef int (*argv_function)(void *const *args);                 /* status (0: done) */
typedef long (*argv_batch)(long count, void *const *args);       /* rows that failed */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    argv_function function;   /* one state */
    argv_batch batch;         /* N states; NULL: batches go to the fallback */
    PyObject *fallback;       /* the Python method */
    PyObject *owner;          /* keeps the library loaded */
    int n_in, n_out, type_num, n_quats;
    npy_intp in_size[MAX_ARGS];
    int out_ndim[MAX_ARGS];   /* 1 to MAX_DIMS: an output's shape for one state */
    npy_intp out_dims[MAX_ARGS][MAX_DIMS];
    npy_intp out_size[MAX_ARGS];  /* entries of an output for one state */
    npy_intp quat[MAX_QUATS]; /* first entry of each quaternion of input 0 */
} Caller;

static PyObject *str_out;    /* "out", interned */

/* an aligned, C-contiguous, native-order array of the dtype with `ndim` dimensions (rows, size) */
static PyArrayObject *plain(PyObject *o, int type_num, int ndim, npy_intp rows, npy_intp size)
{
    if (!PyArray_Check(o))
        return NULL;
    PyArrayObject *a = (PyArrayObject *)o;
    if (PyArray_TYPE(a) != type_num || PyArray_NDIM(a) != ndim || !PyArray_IS_C_CONTIGUOUS(a)
        || !PyArray_ISALIGNED(a) || !PyArray_ISNOTSWAPPED(a))
        return NULL;
    const npy_intp *dims = PyArray_DIMS(a);
    if (ndim == 1 ? dims[0] != size : (dims[0] != rows || dims[1] != size))
        return NULL;
    return a;
}

/* the n entries at x (doubles or floats) all finite: the sum of finite entries is finite, unless
 * they overflow (then the fallback's exact test decides) */
static int all_finite(const void *x, npy_intp n, int type_num)
{
    double s = 0.0;
    if (type_num == NPY_DOUBLE)
        for (npy_intp i = 0; i < n; ++i) s += ((const double *)x)[i];
    else
        for (npy_intp i = 0; i < n; ++i) s += (double)((const float *)x)[i];
    return isfinite(s);
}

/* no quaternion of any of the `rows` rows of q at x has a squared norm below 1e-200 (zero: no rotation) */
static int quaternions(const Caller *self, const void *x, npy_intp rows)
{
    const npy_intp size = self->in_size[0];
    for (npy_intp r = 0; r < rows; ++r)
        for (int k = 0; k < self->n_quats; ++k) {
            double s = 0.0;
            for (int i = 0; i < 4; ++i) {
                const npy_intp at = r * size + self->quat[k] + i;
                const double v = self->type_num == NPY_DOUBLE ? ((const double *)x)[at]
                                                              : (double)((const float *)x)[at];
                s += v * v;
            }
            if (!(s >= 1e-200))
                return 0;
        }
    return 1;
}

static int overlaps(PyArrayObject *a, PyArrayObject *b)
{
    const char *a0 = PyArray_BYTES(a), *b0 = PyArray_BYTES(b);
    return a0 < b0 + PyArray_NBYTES(b) && b0 < a0 + PyArray_NBYTES(a);
}

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* sys.getswitchinterval(): how long Python lets a thread hold the GIL (seconds) */
static double switch_interval(void)
{
    PyObject *get = PySys_GetObject("getswitchinterval");     /* borrowed */
    PyObject *value = get ? PyObject_CallNoArgs(get) : NULL;
    const double s = value ? PyFloat_AsDouble(value) : -1.0;
    Py_XDECREF(value);
    if (PyErr_Occurred())
        PyErr_Clear();
    return s > 0.0 ? s : 0.005;
}

/* The batch over `rows` rows of the inputs (checked chunk by chunk) into the outputs' data;
 * -> rows whose function failed, or -1 when a chunk's check failed (the fallback decides).  The
 * GIL is released once the call has held it for one switch interval; the chunks that follow are
 * copied into `copy` and checked there before the C reads them (this file's head says why). */
static long run_batch(const Caller *self, PyArrayObject *const *inputs, PyObject *const *results, npy_intp rows)
{
    const npy_intp elsize = self->type_num == NPY_DOUBLE ? sizeof(double) : sizeof(float);
    npy_intp row_bytes = 0;
    for (int i = 0; i < self->n_in; ++i)
        row_bytes += self->in_size[i] * elsize;
    const npy_intp chunk = row_bytes < CHUNK_BYTES ? CHUNK_BYTES / row_bytes : 1;
    const double hold = rows > chunk ? switch_interval() : 0.0, t0 = rows > chunk ? seconds() : 0.0;
    PyThreadState *released = NULL;
    char *copy = NULL;
    long failed = 0;
    for (npy_intp start = 0; start < rows; start += chunk) {
        const npy_intp k = rows - start < chunk ? rows - start : chunk;
        void *pointers[MAX_ARGS];
        if (!released && start && seconds() - t0 >= hold && (copy = PyMem_RawMalloc(chunk * row_bytes)))
            released = PyEval_SaveThread();
        char *at = copy;
        for (int i = 0; i < self->n_in; ++i) {
            const npy_intp n = k * self->in_size[i];
            char *from = PyArray_BYTES(inputs[i]) + start * self->in_size[i] * elsize;
            if (released) {
                memcpy(at, from, n * elsize);
                from = at;
                at += chunk * self->in_size[i] * elsize;
            }
            pointers[i] = from;
            if (!all_finite(from, n, self->type_num))
                failed = -1;
        }
        if (failed >= 0 && self->n_quats && !quaternions(self, pointers[0], k))
            failed = -1;
        if (failed < 0)
            break;
        for (int j = 0; j < self->n_out; ++j)
            pointers[self->n_in + j] = PyArray_BYTES((PyArrayObject *)results[j]) + start * self->out_size[j] * elsize;
        failed += self->batch((long)k, pointers);
    }
    if (released)
        PyEval_RestoreThread(released);
    PyMem_RawFree(copy);
    return failed;
}

static PyObject *caller_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Caller *self = (Caller *)callable;
    const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *out = NULL, *results[MAX_ARGS];
    PyArrayObject *inputs[MAX_ARGS];
    void *pointers[MAX_ARGS];
    union { double d; float f; } scalars[MAX_ARGS];   /* Python numbers given for inputs of one entry */
    int made = 0;

    if (nargs != self->n_in || !PyArray_Check(args[0]))
        goto fallback;
    if (kwnames) {
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames); ++k) {
            PyObject *key = PyTuple_GET_ITEM(kwnames, k);
            if (key != str_out && PyUnicode_Compare(key, str_out) != 0)
                goto fallback;
            if (args[nargs + k] != Py_None)
                out = args[nargs + k];
        }
        if (out && self->n_out != 1)
            goto fallback;
    }
    const int ndim = PyArray_NDIM((PyArrayObject *)args[0]);
    if (ndim != 1 && !(ndim == 2 && self->batch))
        goto fallback;
    const npy_intp rows = ndim == 2 ? PyArray_DIMS((PyArrayObject *)args[0])[0] : 1;
    for (int i = 0; i < self->n_in; ++i) {
        if (ndim == 1 && self->in_size[i] == 1 && (PyFloat_Check(args[i]) || PyLong_CheckExact(args[i]))) {
            int overflow = 0;
            const int is_float = PyFloat_Check(args[i]);
            const long long n = is_float ? 0 : PyLong_AsLongLongAndOverflow(args[i], &overflow);
            if (overflow || PyErr_Occurred()) {      /* an int beyond int64: numpy's error, in the fallback */
                PyErr_Clear();
                goto fallback;
            }
            /* converted (rounded) as numpy converts a float64 or int64 to the module's dtype */
            if (self->type_num == NPY_DOUBLE)
                scalars[i].d = is_float ? PyFloat_AS_DOUBLE(args[i]) : (double)n;
            else
                scalars[i].f = is_float ? (float)PyFloat_AS_DOUBLE(args[i]) : (float)n;
            if (!(self->type_num == NPY_DOUBLE ? isfinite(scalars[i].d) : isfinite(scalars[i].f)))
                goto fallback;
            inputs[i] = NULL;
            pointers[i] = &scalars[i];
            continue;
        }
        inputs[i] = plain(args[i], self->type_num, ndim, rows, self->in_size[i]);
        if (!inputs[i] || (ndim == 1 && !all_finite(PyArray_DATA(inputs[i]), self->in_size[i], self->type_num)))
            goto fallback;
        pointers[i] = PyArray_DATA(inputs[i]);
    }
    if (ndim == 1 && self->n_quats && !quaternions(self, pointers[0], 1))
        goto fallback;
    for (int j = 0; j < self->n_out; ++j) {
        npy_intp dims[MAX_DIMS + 1];
        int nd = 0;
        if (ndim == 2)
            dims[nd++] = rows;
        for (int d = 0; d < self->out_ndim[j]; ++d)
            dims[nd++] = self->out_dims[j][d];
        if (out) {
            if (!PyArray_Check(out) || PyArray_NDIM((PyArrayObject *)out) != nd
                || !PyArray_ISWRITEABLE((PyArrayObject *)out)
                || !PyArray_CompareLists(PyArray_DIMS((PyArrayObject *)out), dims, nd))
                goto fallback;
            if (PyArray_TYPE((PyArrayObject *)out) != self->type_num || !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)out)
                || !PyArray_ISALIGNED((PyArrayObject *)out) || !PyArray_ISNOTSWAPPED((PyArrayObject *)out))
                goto fallback;
            for (int i = 0; i < self->n_in; ++i)
                if (inputs[i] && overlaps((PyArrayObject *)out, inputs[i]))
                    goto fallback;
            Py_INCREF(out);
            results[j] = out;
        } else {
            results[j] = PyArray_SimpleNew(nd, dims, self->type_num);
            if (!results[j])
                goto error;
        }
        made = j + 1;
        pointers[self->n_in + j] = PyArray_DATA((PyArrayObject *)results[j]);
    }
    const long failed = ndim == 1 ? (long)self->function(pointers) : run_batch(self, inputs, results, rows);
    if (failed)
        goto fallback;
    if (self->n_out == 1)
        return results[0];
    PyObject *tuple = PyTuple_New(self->n_out);
    if (!tuple)
        goto error;
    for (int j = 0; j < self->n_out; ++j)
        PyTuple_SET_ITEM(tuple, j, results[j]);
    return tuple;

fallback:
    for (int j = 0; j < made; ++j)
        Py_DECREF(results[j]);
    return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
error:
    for (int j = 0; j < made; ++j)
        Py_DECREF(results[j]);
    return NULL;
}

/* Caller(function, batch, fallback, owner, in_sizes, out_shapes, quaternions, single) */
static PyObject *caller_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    unsigned long long function, batch;
    PyObject *fallback, *owner, *in_sizes, *out_shapes, *quats;
    int single;
    if (kwds && PyDict_GET_SIZE(kwds)) {
        PyErr_SetString(PyExc_TypeError, "Caller takes positional arguments only");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "KKOOO!O!O!p", &function, &batch, &fallback, &owner, &PyTuple_Type, &in_sizes,
                          &PyTuple_Type, &out_shapes, &PyTuple_Type, &quats, &single))
        return NULL;
    const Py_ssize_t n_in = PyTuple_GET_SIZE(in_sizes), n_out = PyTuple_GET_SIZE(out_shapes);
    if (!function || n_in < 1 || n_out < 1 || n_in + n_out > MAX_ARGS || PyTuple_GET_SIZE(quats) > MAX_QUATS
        || !PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_ValueError, "Caller: no function, no inputs or outputs, too many arguments, "
                                          "or a fallback that cannot be called");
        return NULL;
    }
    Caller *self = PyObject_GC_New(Caller, type);
    if (!self)
        return NULL;
    self->vectorcall = caller_vectorcall;
    self->function = (argv_function)(uintptr_t)function;
    self->batch = (argv_batch)(uintptr_t)batch;
    self->n_in = (int)n_in;
    self->n_out = (int)n_out;
    self->type_num = single ? NPY_FLOAT : NPY_DOUBLE;
    self->n_quats = (int)PyTuple_GET_SIZE(quats);
    Py_INCREF(fallback);
    Py_INCREF(owner);
    self->fallback = fallback;
    self->owner = owner;
    for (Py_ssize_t i = 0; i < n_in; ++i)
        self->in_size[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(in_sizes, i));
    for (Py_ssize_t j = 0; j < n_out; ++j) {
        PyObject *shape = PyTuple_GET_ITEM(out_shapes, j);
        const Py_ssize_t nd = PyTuple_Check(shape) ? PyTuple_GET_SIZE(shape) : 0;
        if (nd < 1 || nd > MAX_DIMS) {
            PyObject_GC_UnTrack(self);
            Py_DECREF(self);
            PyErr_SetString(PyExc_ValueError, "Caller: an output shape has 1 to 8 dimensions");
            return NULL;
        }
        self->out_ndim[j] = (int)nd;
        self->out_size[j] = 1;
        for (Py_ssize_t d = 0; d < nd; ++d) {
            self->out_dims[j][d] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, d));
            self->out_size[j] *= self->out_dims[j][d];
        }
    }
    for (Py_ssize_t k = 0; k < self->n_quats; ++k)
        self->quat[k] = PyLong_AsSsize_t(PyTuple_GET_ITEM(quats, k));
    if (PyErr_Occurred()) {
        PyObject_GC_UnTrack(self);
        Py_DECREF(self);
        return NULL;
    }
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

static int caller_traverse(Caller *self, visitproc visit, void *arg)
{
    Py_VISIT(self->fallback);
    Py_VISIT(self->owner);
    return 0;
}

static int caller_clear(Caller *self)
{
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->owner);
    return 0;
}

static void caller_dealloc(Caller *self)
{
    PyObject_GC_UnTrack(self);
    caller_clear(self);
    PyObject_GC_Del(self);
}

static PyObject *caller_call(PyObject *self, PyObject *args, PyObject *kwargs)
{
    return PyVectorcall_Call(self, args, kwargs);
}

static PyObject *caller_get(Caller *self, const char *name)
{
    return PyObject_GetAttrString(self->fallback, name);
}

static PyObject *caller_doc(Caller *self, void *closure) { return caller_get(self, "__doc__"); }
static PyObject *caller_name(Caller *self, void *closure) { return caller_get(self, "__name__"); }
static PyObject *caller_wrapped(Caller *self, void *closure) { Py_INCREF(self->fallback); return self->fallback; }

static PyObject *caller_repr(Caller *self)
{
    return PyUnicode_FromFormat("<soagen method: the C call, %R for the rest>", self->fallback);
}

static PyGetSetDef caller_getset[] = {
    {"__doc__", (getter)caller_doc, NULL, NULL, NULL},
    {"__name__", (getter)caller_name, NULL, NULL, NULL},
    {"__wrapped__", (getter)caller_wrapped, NULL, "the Python method: every call the C path does not take", NULL},
    {NULL},
};

static PyMemberDef caller_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(Caller, vectorcall), READONLY, NULL},
    {NULL},
};

static PyTypeObject CallerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "soagen.Caller",
    .tp_basicsize = sizeof(Caller),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A module method: the generated C called on numpy arrays as they are, the Python method for the rest.",
    .tp_new = caller_new,
    .tp_call = caller_call,
    .tp_vectorcall_offset = offsetof(Caller, vectorcall),
    .tp_traverse = (traverseproc)caller_traverse,
    .tp_clear = (inquiry)caller_clear,
    .tp_dealloc = (destructor)caller_dealloc,
    .tp_repr = (reprfunc)caller_repr,
    .tp_getset = caller_getset,
    .tp_members = caller_members,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_soagen_fastcall", NULL, -1, NULL};

PyMODINIT_FUNC PyInit__soagen_fastcall(void)
{
    import_array();
    if (PyType_Ready(&CallerType) < 0)
        return NULL;
    str_out = PyUnicode_InternFromString("out");
    PyObject *m = PyModule_Create(&module);
    if (!m || !str_out)
        return NULL;
    Py_INCREF(&CallerType);
    if (PyModule_AddObject(m, "Caller", (PyObject *)&CallerType) < 0)
        return NULL;
    return m;
}
