# The native kernel-block evaluator (skylite/sketch/_kernel_block.pyx): K = k(X, L) for a
# range of input rows X (the dense or CSR `Rows` of _transform.pxd) against m dense rows L,
# for every kernel that skylite evaluates exactly.  `Kernel.gram` (skylite.kernels) and the
# Nystroem transform (_nystroem.pyx) both call it, so each kernel's formula is written once.
from skylite.sketch._transform cimport Rows

cpdef enum KernelCode:
    GAUSSIAN = 0        # exp(-p0 ||x - l||^2),            p0 = 1 / (2 sigma^2)
    LAPLACIAN = 1       # exp(-p0 ||x - l||_1),            p0 = 1 / sigma
    MATERN = 2          # Matern(nu = p0, length_scale = 1 / p1)
    POLYNOMIAL = 3      # (p0 x.l + p1)^p2
    EXP_SEMIGROUP = 4   # exp(-p0 sum_k sqrt(x_k + l_k))
    LINEAR = 5          # x.l

# A kernel as the evaluator sees it: its code and up to three parameters (as above).
ctypedef struct KernelSpec:
    int code
    double p0
    double p1
    double p2

ctypedef fused floating_t:
    float
    double

# The parameters of m rows L (row-major, m x d, float64) in the compute type: LT = L^T
# (d x m, row-major: column c is row c of L) and aux[c], the kernel's per-row constant
# (||l_c||^2 for the Gaussian and Matern kernels, ||l_c||_1 Laplacian, sum_k sqrt(l_ck)
# exp-semigroup, 0 otherwise).  Writes d * m + m values.
cdef void landmark_params(KernelSpec kernel, const double *L, Py_ssize_t m, Py_ssize_t d,
                          floating_t *LT, floating_t *aux) noexcept nogil

# K[i * ldk + c] = k(x_i, l_c) for the n = rows.n_rows rows x_i (d columns) and the m rows
# whose `landmark_params` are LT, aux.  Needs no scratch beyond K; cannot fail.
cdef void kernel_block(KernelSpec kernel, const Rows *rows, const floating_t *LT,
                       const floating_t *aux, Py_ssize_t d, Py_ssize_t m, floating_t *K,
                       Py_ssize_t ldk) noexcept nogil

# The two halves of kernel_block, for a map that keeps the first across kernel parameters:
# the precursor, which depends on the landmarks but not on p0, p1, p2 (the dot products x.l
# for the Gaussian, polynomial and linear kernels; the separable sums of the others), and
# the kernel values computed from it in place (K then holds k(x_i, l_c)).  kernel_block is
# kernel_precursor followed by kernel_values, so a precursor kept and copied back gives the
# same bits.  The rows must be the same rows in both calls (kernel_values reads ||x||^2).
cdef void kernel_precursor(KernelSpec kernel, const Rows *rows, const floating_t *LT,
                           const floating_t *aux, Py_ssize_t d, Py_ssize_t m, floating_t *K,
                           Py_ssize_t ldk) noexcept nogil
cdef void kernel_values(KernelSpec kernel, const Rows *rows, const floating_t *aux,
                        Py_ssize_t d, Py_ssize_t m, floating_t *K, Py_ssize_t ldk) noexcept nogil
